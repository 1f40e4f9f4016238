//! A kernel launch on the CPU: the kernel's host body (from the image's kernel table)
//! run once per block, a block being one thread with a warp of one lane.
//!
//! An ordinary launch runs its blocks one after another on the stream's thread: a
//! stream is the unit of parallelism, and a launch costs no thread start. Spreading a
//! launch's blocks over the cores gained nothing where it was measured (the 2-core CI
//! machine: `resident_pipeline`'s body over 16 Mi floats, 65536 blocks in order 297 to
//! 322 ms, over 2 threads 305 to 322 ms; docs/streams.md). A cooperative launch runs
//! every block on its own thread at once, so that blocks may wait for each other (a
//! grid barrier), as they may on a GPU; it is refused above [`MAX_COOPERATIVE_BLOCKS`].

use std::sync::{Arc, Condvar, Mutex};

use resident_device::arch;

use crate::image::__CpuKernelFn;
use crate::stream::caught::run_caught;
use crate::{Error, Result};

/// The largest cooperative grid the CPU runs: one thread per block, all at once.
pub(crate) const MAX_COOPERATIVE_BLOCKS: u32 = 1024;

/// One launch: what runs, how many blocks, and the parameter bytes (copied at launch,
/// as the driver copies them).
pub(crate) struct CpuLaunch {
    pub name: Arc<str>,
    pub body: __CpuKernelFn,
    pub grid: u32,
    pub shared_bytes: u32,
    pub cooperative: bool,
    pub params: Vec<u8>,
}

fn fault(name: &str, block: u32, msg: String) -> Error {
    Error::DeviceFault(format!("kernel `{name}` panicked in block {block} on the CPU backend: {msg}"))
}

impl CpuLaunch {
    /// Runs every block; a block that panics (a `trap`) fails the launch.
    ///
    /// # Safety
    /// What `Stream::launch` demands: the parameters are valid for what the kernel does.
    pub unsafe fn execute(&self) -> Result<()> {
        if self.cooperative { self.all_at_once() } else { self.one_after_another() }
    }

    fn enter_block(&self, block: u32) {
        arch::set_worker(block, self.grid);
        arch::set_smem_bytes(self.shared_bytes);
    }

    fn one_after_another(&self) -> Result<()> {
        for b in 0..self.grid {
            self.enter_block(b);
            // SAFETY: `execute`'s contract; the bytes are one parameter of the size the
            // kernel takes (checked by `Module::function`).
            run_caught(|| unsafe { (self.body)(&self.params) }).map_err(|msg| fault(&self.name, b, msg))?;
        }
        Ok(())
    }

    /// Every block on its own thread. No block starts before all threads exist: if one
    /// cannot be started, none runs the kernel (a block already running could wait at a
    /// grid barrier for one that never comes).
    fn all_at_once(&self) -> Result<()> {
        // `None` until every thread is started; then whether to run.
        let gate = (Mutex::new(None::<bool>), Condvar::new());
        let first_fault = Mutex::new(None::<Error>);
        std::thread::scope(|s| {
            let mut started = Ok(());
            for b in 0..self.grid {
                let (gate, first_fault) = (&gate, &first_fault);
                let block = move || {
                    let mut go = gate.0.lock().unwrap_or_else(|p| p.into_inner());
                    while go.is_none() {
                        go = gate.1.wait(go).unwrap_or_else(|p| p.into_inner());
                    }
                    if *go != Some(true) {
                        return;
                    }
                    drop(go);
                    self.enter_block(b);
                    // SAFETY: as in `one_after_another`.
                    if let Err(msg) = run_caught(|| unsafe { (self.body)(&self.params) }) {
                        first_fault.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(fault(&self.name, b, msg));
                    }
                };
                if let Err(e) = std::thread::Builder::new().spawn_scoped(s, block) {
                    started = Err(Error::Config(format!("cooperative launch of `{}`: cannot start block {b}'s thread: {e}", self.name)));
                    break;
                }
            }
            *gate.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(started.is_ok());
            gate.1.notify_all();
            started
        })?;
        match first_fault.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
