//! [`TaskSet`]: the task types one persistent kernel runs, and [`crate::task_set!`],
//! which declares one. The dispatcher a set gets is a chain of comparisons of the task's
//! id with each type's constant id, monomorphized into the persistent loop: what a
//! `match` over a closed enum compiled to, with no table and no indirect call.

use resident_shared::{ArgError, Declare, TASK_ARG_BYTES, Task, TaskId};

use super::{DeviceTask, Outcome, TaskCx};
use resident_shared::Status;

/// The task types one persistent kernel (and the CPU backend's workers) dispatch to.
/// Implemented by [`crate::task_set!`]; a set may include another (the built-in tasks,
/// [`crate::Builtins`], or a set of a library's).
pub trait TaskSet: 'static {
    /// The set's name, for messages.
    const NAME: &'static str;
    /// Every task type's id: the included set's first, then the set's own, in the order
    /// written. Unique (checked at compile time).
    const IDS: &'static [TaskId];

    /// Runs `task` on the calling warp (every lane calls). An id the set does not hold
    /// completes with `Status::InvalidOpcode`.
    fn execute(task: &Task, cx: &TaskCx) -> Outcome;

    /// Host side: the declaration of `task` by its type, or `None` if the set holds no
    /// such type.
    fn declare(task: &Task, d: &mut Declare<'_>) -> Option<Result<(), ArgError>>;

    /// Relay side: `Some(pure)` if the relay warp may run `task` itself
    /// ([`DeviceTask::RELAY`], [`DeviceTask::on_relay`], [`DeviceTask::PURE`]).
    fn on_relay(task: &Task) -> Option<bool>;

    /// [`TaskSet::execute`] for the relay warp: holds only the [`DeviceTask::RELAY`]
    /// types, so that the relay kernel's code stays small.
    fn execute_relayed(task: &Task, cx: &TaskCx) -> Outcome;

    /// A hash of [`TaskSet::IDS`]: the host checks that a kernel image's PTX was built
    /// for the set it was paired with.
    const FINGERPRINT: u64 = fingerprint(Self::IDS);

    /// Whether the set holds a task type of id `id`.
    fn contains(id: TaskId) -> bool {
        Self::IDS.contains(&id)
    }
}

/// The empty set: what a set without an included one extends.
pub struct NoTasks;

impl TaskSet for NoTasks {
    const NAME: &'static str = "NoTasks";
    const IDS: &'static [TaskId] = &[];
    #[inline(always)]
    fn execute(_: &Task, _: &TaskCx) -> Outcome {
        Outcome::err(Status::InvalidOpcode)
    }
    fn declare(_: &Task, _: &mut Declare<'_>) -> Option<Result<(), ArgError>> {
        None
    }
    #[inline(always)]
    fn on_relay(_: &Task) -> Option<bool> {
        None
    }
    #[inline(always)]
    fn execute_relayed(_: &Task, _: &TaskCx) -> Outcome {
        Outcome::err(Status::InvalidOpcode)
    }
}

/// One arm of a set's dispatcher: runs `task` as a `T`. The task gets a context built
/// for it from `cx` (`TaskCx::for_run`), held to the task's declaration as a `T`: if
/// `T::run` is not inlined, only that one's address escapes, and the loop's own context
/// stays in registers (an escaping one is stored to the stack for every task). Its
/// `spawned` flag goes back to `cx`.
///
/// A task pushed on the device (`task_flags::CHILD`: spawned, or pushed through a peer
/// link from another runtime) never runs as an `UNCHECKED` type: `spawn` and `push_to`
/// refuse such types at compile time, but device code can name any id with a checked
/// type of its own, and no host check stood between it and this dispatch. Folded away
/// for every checked type.
#[inline(always)]
pub fn run_as<T: DeviceTask>(task: &Task, cx: &TaskCx) -> Outcome {
    use resident_shared::task_flags::{CHILD, PEER};
    if task.flags & CHILD != 0 {
        // A pushed child: never an `UNCHECKED` type, and (spawned here, not through a
        // peer link) built by the set's type of its id, as its tag says (`TaskCx::spawn`).
        if T::UNCHECKED || (task.flags & PEER == 0 && task.wait_value != resident_shared::type_tag::<T>() as u32) {
            return Outcome::err(resident_shared::Status::InvalidOpcode);
        }
    }
    let args = task.args_as::<T>();
    // What the task is held to (`super::declared`). A declaration's own verdict (`Err`)
    // was the host's to act on (children have none: they are held to their parent's).
    // An `UNCHECKED` type's caller vouched for it instead (`Batch::submit_unchecked`), and it
    // reaches memory by raw address: it gets no declaration to be held to (every view
    // of it is refused), and no table costs the loop for it. A type whose author
    // vouched for its runs (`DeclarationCheck::vouched`) gets everything granted.
    let mut declared = resident_shared::Collected::new();
    let own = if T::DECLARATION_CHECK.is_held() {
        if !T::UNCHECKED {
            let _ = args.declare(&mut Declare::collect(&mut declared));
        }
        // SAFETY: `declared` outlives `own`, which lives for the run.
        unsafe { cx.for_run(&declared) }
    } else {
        cx.for_vouched_run()
    };
    let out = T::run(args, &own).into();
    if own.spawned.get() {
        cx.spawned.set(true);
    }
    out
}

/// One arm of a set's declaration dispatch. A record tagged as built by another type
/// than `T` (`Task::with_args`) declares only that (`Declare::foreign`): the host
/// refuses it, whatever its arguments would say as a `T`.
#[inline(always)]
pub fn declare_as<T: DeviceTask>(task: &Task, d: &mut Declare<'_>) -> Result<(), ArgError> {
    if task.flags != 0 && task.flags != resident_shared::type_tag::<T>() {
        d.foreign();
        return Ok(());
    }
    if T::UNCHECKED {
        d.unchecked();
    }
    task.args_as::<T>().declare(d)
}

/// One arm of a set's relay dispatch.
#[inline(always)]
pub fn relay_as<T: DeviceTask>(task: &Task) -> Option<bool> {
    if T::RELAY && task.args_as::<T>().on_relay() { Some(T::PURE) } else { None }
}

/// Compile-time check of one task type's arguments (called by [`crate::task_set!`]).
pub const fn fits<T: DeviceTask>() {
    assert!(
        size_of::<T>() <= TASK_ARG_BYTES && align_of::<T>() <= 16,
        "task_set!: a task type's arguments take more than TASK_ARG_BYTES (48) bytes, or an alignment above 16"
    );
}

/// FNV-1a (64 bits) of the ids, in order.
pub const fn fingerprint(ids: &[TaskId]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut i = 0;
    while i < ids.len() {
        let b = ids[i].0.to_le_bytes();
        h = (h ^ b[0] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        h = (h ^ b[1] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// `a` then `b` as one array (for [`TaskSet::IDS`]).
pub const fn concat_ids<const N: usize>(a: &[TaskId], b: &[TaskId]) -> [TaskId; N] {
    assert!(a.len() + b.len() == N);
    let mut out = [TaskId(0); N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - a.len()];
        i += 1;
    }
    out
}

/// Compile-time check of a set's ids (called by [`crate::task_set!`]): each one
/// assignable (not 0, not the runtime's `0xff00..`), no two alike. The message names
/// the id and where it stands in the set (the included set's types first, then the
/// listed ones, counted from 0).
pub const fn check_ids(ids: &[TaskId]) {
    let mut i = 0;
    while i < ids.len() {
        if !ids[i].is_assignable() {
            let mut m = Message::new();
            m.push("task_set!: the task type at position ");
            m.push_dec(i as u32);
            m.push(" has id ");
            m.push_hex(ids[i].0);
            m.push(", which is 0 or in the runtime's range 0xff00..=0xffff");
            panic!("{}", m.as_str());
        }
        let mut j = i + 1;
        while j < ids.len() {
            if ids[i].0 == ids[j].0 {
                let mut m = Message::new();
                m.push("task_set!: the task types at positions ");
                m.push_dec(i as u32);
                m.push(" and ");
                m.push_dec(j as u32);
                m.push(" of this set (the included set's first) both have id ");
                m.push_hex(ids[i].0);
                panic!("{}", m.as_str());
            }
            j += 1;
        }
        i += 1;
    }
}

/// A compile-time error message with numbers in it (`panic!` in a `const fn` formats
/// only a `&str`).
struct Message {
    buf: [u8; 160],
    len: usize,
}

impl Message {
    const fn new() -> Self {
        Self { buf: [0; 160], len: 0 }
    }
    const fn push(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && self.len < self.buf.len() {
            self.buf[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
    }
    const fn push_digit(&mut self, d: u8) {
        if self.len < self.buf.len() {
            self.buf[self.len] = if d < 10 { b'0' + d } else { b'a' + d - 10 };
            self.len += 1;
        }
    }
    const fn push_dec(&mut self, v: u32) {
        let mut p = 1_000_000_000u32;
        let mut started = false;
        while p > 0 {
            let d = (v / p % 10) as u8;
            if d != 0 || started || p == 1 {
                self.push_digit(d);
                started = true;
            }
            p /= 10;
        }
    }
    const fn push_hex(&mut self, v: u16) {
        self.push("0x");
        let mut shift = 12;
        loop {
            self.push_digit(((v >> shift) & 0xf) as u8);
            if shift == 0 {
                break;
            }
            shift -= 4;
        }
    }
    const fn as_str(&self) -> &str {
        let (bytes, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(_) => "task_set!: invalid task ids",
        }
    }
}

/// Declares a [`TaskSet`]: a unit struct whose dispatcher runs the listed task types,
/// and, if one is named after the colon, every type of an included set (the built-in
/// tasks: [`crate::Builtins`]).
///
/// ```
/// # use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};
/// # #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)] #[repr(C)] pub struct Ping { pub tag: u32 }
/// # impl DeviceTask for Ping {
/// #     const ID: TaskId = TaskId(0x100);
/// #     fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> { Ok(()) }
/// #     fn run(&self, _: &TaskCx) -> Result<u64, Status> { Ok(self.tag as u64) }
/// # }
/// resident_device::task_set! {
///     /// Ping, and the built-in tasks.
///     pub struct WithBuiltins: resident_device::Builtins { Ping }
/// }
/// resident_device::task_set! {
///     /// Ping alone.
///     pub struct PingOnly { Ping }
/// }
/// ```
///
/// Checked at compile time: every type's arguments fit a task (48 bytes, alignment at
/// most 16), and no two types of the set, the included set's among them, share an id.
#[macro_export]
macro_rules! task_set {
    ($(#[$meta:meta])* $vis:vis struct $name:ident $(: $base:ty)? { $($task:ty),* $(,)? }) => {
        $(#[$meta])*
        $vis struct $name;

        const _: () = {
            $( $crate::task::fits::<$task>(); )*
            $crate::task::check_ids(<$name as $crate::TaskSet>::IDS);
        };

        impl $crate::TaskSet for $name {
            const NAME: &'static str = stringify!($name);
            const IDS: &'static [$crate::shared::TaskId] = &{
                const BASE: &[$crate::shared::TaskId] = <$crate::task_set!(@base $($base)?) as $crate::TaskSet>::IDS;
                const OWN: &[$crate::shared::TaskId] = &[$(<$task as $crate::DeviceTask>::ID),*];
                $crate::task::concat_ids::<{ BASE.len() + OWN.len() }>(BASE, OWN)
            };

            #[inline(always)]
            fn execute(task: &$crate::shared::Task, cx: &$crate::TaskCx) -> $crate::task::Outcome {
                let id = task.opcode;
                $( if id == <$task as $crate::DeviceTask>::ID.0 { return $crate::task::run_as::<$task>(task, cx); } )*
                <$crate::task_set!(@base $($base)?) as $crate::TaskSet>::execute(task, cx)
            }

            // Always: the host's check of a batch (`validate_set`) loops over this; a
            // call per task cost 7-8 ns a noop on the H100 machine's host.
            #[inline(always)]
            fn declare(task: &$crate::shared::Task, d: &mut $crate::shared::Declare<'_>) -> Option<Result<(), $crate::shared::ArgError>> {
                let id = task.opcode;
                $( if id == <$task as $crate::DeviceTask>::ID.0 { return Some($crate::task::declare_as::<$task>(task, d)); } )*
                <$crate::task_set!(@base $($base)?) as $crate::TaskSet>::declare(task, d)
            }

            #[inline(always)]
            fn on_relay(task: &$crate::shared::Task) -> Option<bool> {
                let id = task.opcode;
                $( if <$task as $crate::DeviceTask>::RELAY && id == <$task as $crate::DeviceTask>::ID.0 { return $crate::task::relay_as::<$task>(task); } )*
                <$crate::task_set!(@base $($base)?) as $crate::TaskSet>::on_relay(task)
            }

            #[inline(always)]
            fn execute_relayed(task: &$crate::shared::Task, cx: &$crate::TaskCx) -> $crate::task::Outcome {
                let id = task.opcode;
                $( if <$task as $crate::DeviceTask>::RELAY && id == <$task as $crate::DeviceTask>::ID.0 { return $crate::task::run_as::<$task>(task, cx); } )*
                <$crate::task_set!(@base $($base)?) as $crate::TaskSet>::execute_relayed(task, cx)
            }
        }
    };
    (@base) => { $crate::task::NoTasks };
    (@base $base:ty) => { $base };
}
