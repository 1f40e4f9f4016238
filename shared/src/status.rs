//! Completion status codes, written by the device into [`crate::Completion::status`].

/// Outcome of one task on the device. `Ok` is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Status {
    /// The task ran and succeeded.
    Ok = 0,
    /// The task's id is not in the runtime's task set.
    InvalidOpcode = 1,
    /// A buffer handle is unknown, freed, or of the wrong element type.
    BadBuffer = 2,
    /// A buffer slice reaches past the end of its buffer.
    OutOfRange = 3,
    /// Arguments are inconsistent (for example axpy slices of different lengths).
    BadArgs = 4,
    /// The runtime aborted while the task was running or waiting.
    Aborted = 5,
    /// A task pushed on the device by one of the batch's tasks failed (children have
    /// no completion record of their own; the segment counts their failures).
    ChildFailed = 6,
    /// A task could not push follow-up tasks: the device queue was full.
    QueueFull = 7,
    /// The task reported a failure of its own (its arguments or its input, by its own
    /// judgement).
    Failed = 8,
    /// Its ticket was cancelled (`Ticket::cancel`) while the task waited on a counter,
    /// pushed into a full spawn ring, or polled for it (`TaskCx::cancelled`). A task of
    /// a cancelled ticket that does none of these runs as usual.
    Cancelled = 9,
    /// A counter the task waited on was dropped by the host: no signal would come.
    CounterDropped = 10,
    /// A push through a link ([`crate::link::LinkId`]) that names no live link of this
    /// runtime: dropped, another runtime's, or forged.
    BadLink = 11,
    /// The task reached memory, a counter or a task type that its declaration
    /// (`DeviceTask::declare`) does not grant: a slice outside every declared one, a
    /// write to a slice declared read-only (or atomic-only), a counter it does not name,
    /// a child of a type it does not declare, or a child that would touch more than the
    /// pushing task declared. Nothing of that access happened.
    Undeclared = 12,
}

impl Status {
    /// The status of a raw code, if it is one.
    pub const fn from_u32(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::Ok),
            1 => Some(Self::InvalidOpcode),
            2 => Some(Self::BadBuffer),
            3 => Some(Self::OutOfRange),
            4 => Some(Self::BadArgs),
            5 => Some(Self::Aborted),
            6 => Some(Self::ChildFailed),
            7 => Some(Self::QueueFull),
            8 => Some(Self::Failed),
            9 => Some(Self::Cancelled),
            10 => Some(Self::CounterDropped),
            11 => Some(Self::BadLink),
            12 => Some(Self::Undeclared),
            _ => None,
        }
    }

    /// The status in words.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::InvalidOpcode => "invalid opcode",
            Self::BadBuffer => "bad buffer handle",
            Self::OutOfRange => "buffer slice out of range",
            Self::BadArgs => "inconsistent arguments",
            Self::Aborted => "aborted",
            Self::ChildFailed => "a follow-up task pushed on the device failed",
            Self::QueueFull => "the spawn ring (RuntimeConfig::spawn_capacity) or a link's outbox had no room for follow-up tasks",
            Self::Failed => "the task reported a failure",
            Self::Cancelled => "its ticket was cancelled while it waited",
            Self::CounterDropped => "a counter it waited on was dropped",
            Self::BadLink => "a push through a link that is not live in this runtime",
            Self::Undeclared => "it reached memory, a counter or a task type its declaration does not grant",
        }
    }
}
