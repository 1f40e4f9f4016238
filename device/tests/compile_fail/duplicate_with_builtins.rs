// A task type whose id is a built-in task's, in a set that includes the built-in ones.
use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Mine(u32);

impl DeviceTask for Mine {
    const ID: TaskId = TaskId(2); // the built-in axpy's
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        Ok(0)
    }
}

resident_device::task_set! {
    pub struct WithBuiltins: resident_device::Builtins { Mine }
}

fn main() {}
