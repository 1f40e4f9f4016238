//! The steps of the persistent loop that a profiling build times (`RESIDENT_DEVICE_TIMING`
//! at build time, docs/profiling.md): per worker warp, lane 0 adds the SM cycles
//! (`clock64`) spent in each step to its own counters and stores them, cumulative, into
//! its row of `KernelParams::steps` every [`FLUSH_EVERY`] tasks. Rows are the warps'
//! own: no atomics; the host sums them (`Probe::device_steps`).

/// Counters per warp: one per step, and the tasks counted.
pub const STEPS: usize = 10;

/// Tasks between two stores of a warp's counters.
pub const FLUSH_EVERY: u32 = 16;

/// Index of each counter in a warp's row.
pub mod step {
    /// Tasks run (children included): a count, not cycles.
    pub const TASKS: usize = 0;
    /// Claiming a slot: the atomic's round trip (its result awaited).
    pub const CLAIM: usize = 1;
    /// Polls that found the claimed slot not yet published, and the sleeps between.
    pub const IDLE: usize = 2;
    /// The poll that found it published.
    pub const POLL: usize = 3;
    /// Finding where its task lies (the warp's cached run, or a scan of the table).
    pub const FIND: usize = 4;
    /// Reading a host-ring task into the lanes' copy (over PCIe).
    pub const COPY: usize = 5;
    /// Before its code: a child's copy out of the stack, its context, its dependency.
    pub const RUN: usize = 6;
    /// Looking for children in the spawn ring (and taking one).
    pub const CHILDREN: usize = 7;
    /// The task's own code.
    pub const BODY: usize = 8;
    /// Its completion (and the chunk's bookkeeping).
    pub const DONE: usize = 9;
}

/// The counters' names, in their order in a warp's row.
pub const NAMES: [&str; STEPS] = ["tasks", "claim", "idle", "poll", "find", "copy", "run", "children", "body", "done"];
