// A task type whose arguments take more than the 48 bytes a task has.
use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Big([u32; 13]);

impl DeviceTask for Big {
    const ID: TaskId = TaskId(0x300);
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        Ok(0)
    }
}

resident_device::task_set! {
    pub struct TooBig { Big }
}

fn main() {}
