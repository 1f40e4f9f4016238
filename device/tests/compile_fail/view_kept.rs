// A task that keeps a view of a buffer past its run (in a thread-local, as the CPU
// backend's workers allow): a view borrows the task's context, so it cannot outlive the
// run, and no later task can reach a buffer's memory through it once the runtime freed it.
use resident_device::{ArgError, Declare, DeviceTask, Slice, Status, TaskCx, TaskId, View};
use std::cell::Cell;

thread_local! {
    static KEPT: Cell<Option<View<'static, u32>>> = const { Cell::new(None) };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Keeps {
    x: Slice<u32>,
}

impl DeviceTask for Keeps {
    const ID: TaskId = TaskId(0x300);
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.write(self.x);
        Ok(())
    }
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let v = cx.view(self.x)?;
        KEPT.with(|k| k.set(Some(v)));
        Ok(0)
    }
}

fn main() {}
