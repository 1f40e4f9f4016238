// A task that keeps a copy of its context past its run: the context is lent for the run
// only (not `Clone` or `Copy`), so that nothing a task keeps can reach into the
// persistent loop after the run (a push from a thread-local's destructor, say).
use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Keeps(u32);

impl DeviceTask for Keeps {
    const ID: TaskId = TaskId(0x300);
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let kept: TaskCx = *cx;
        std::mem::forget(kept);
        Ok(0)
    }
}

fn main() {}
