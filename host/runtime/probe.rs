//! The runtime's internals for its benches and baselines ([`Runtime::probe`]): not a
//! stable API, and apart from the user's methods.

use resident_shared::Task;

use crate::{Error, Result, Runtime};

/// What [`Runtime::probe`] shows.
#[derive(Clone, Copy)]
pub struct Probe<'a> {
    pub(crate) rt: &'a Runtime,
}

impl Probe<'_> {
    /// The parameters of `resident_one_task` for `task` (checked as [`Runtime::submit`]
    /// checks it): the task runs alone on one warp and writes its completion record at
    /// `completion` (a device address of 16 writable bytes; a host address on the CPU
    /// backend) with sequence number `seq`. The launch-per-task baseline a persistent
    /// runtime is measured against (the benches' rivals).
    pub fn one_task_params(&self, task: &Task, seq: u32, completion: u64) -> Result<resident_shared::OneTaskParams> {
        {
            let r = self.rt.shared.registries.read();
            crate::image::validate::validate(std::slice::from_ref(task), &self.rt.shared.set, &r.registry, &r.counters)?;
        }
        // The runtime's header words cleared: `flags` holds the building type's tag
        // until placement, which the device would read as flags.
        let task = Task { flags: 0, seg: 0, ..*task };
        Ok(resident_shared::OneTaskParams { task, completion, buffers: self.rt.shared.backend.table_ptr(), seq, _pad: [0; 11] })
    }

    /// `tasks` checked as [`Runtime::submit`] checks them, as the records
    /// `resident_table` reads (the runtime's header words cleared: no segment, no flags),
    /// and that kernel's parameters for those records placed at device address `at`
    /// (one launch of `len` warps runs them; nothing is recorded). The one launch over a
    /// task table that a CUDA programmer writes: the runtime's strongest rival for a
    /// known set of tasks.
    pub fn table_params(&self, tasks: &[Task], at: u64) -> Result<(Vec<Task>, resident_shared::TableParams)> {
        let len = u32::try_from(tasks.len()).map_err(|_| Error::BatchTooLarge(tasks.len()))?;
        // The table runs no dependencies: its tasks are all ready.
        if tasks.iter().any(|t| t.wait_counter != 0 || t.signal_counter != 0) {
            return Err(Error::Config("the table baseline runs tasks that wait on or signal no counter".into()));
        }
        {
            let r = self.rt.shared.registries.read();
            crate::image::validate::validate(tasks, &self.rt.shared.set, &r.registry, &r.counters)?;
        }
        let placed = tasks.iter().map(|t| Task { flags: 0, seg: 0, ..*t }).collect();
        Ok((placed, resident_shared::TableParams { tasks: at, buffers: self.rt.shared.backend.table_ptr(), len, _pad: [0; 3] }))
    }

    /// How far the relay warp has published (a sequence number), on the CUDA backend
    /// with the relay enabled. For latency measurements (benches/latency.rs).
    pub fn relayed(&self) -> Option<u64> {
        self.rt.shared.backend.cuda().and_then(|c| c.relayed())
    }

    /// How far the host has published (a sequence number: every task before it is
    /// written and handed to the device). For timelines of a batch (benches/dispatch.rs).
    pub fn published(&self) -> u64 {
        self.rt.shared.publisher.published()
    }

    /// Profiling builds (`RESIDENT_DEVICE_TIMING` set when it was built,
    /// docs/profiling.md): the worker warps' cycle counts per step of the persistent
    /// loop so far, summed over the warps, in the order of
    /// `resident_shared::steps::NAMES` (the first is a count of tasks). `None` in an
    /// ordinary build and on the CPU backend.
    pub fn device_steps(&self) -> Option<[u64; resident_shared::steps::STEPS]> {
        self.rt.shared.backend.cuda()?.device_steps()
    }

    /// Tasks completed so far (every task before this sequence number), with no lock
    /// but the completion scan's: for timelines of a batch, polled in a loop beside
    /// [`Probe::published`] (benches/dispatch.rs). Users read it in
    /// [`Runtime::metrics`].
    pub fn completed(&self) -> u64 {
        self.rt.shared.tracker.advance(&self.rt.shared.backend)
    }
}
