// A task type with an id of the runtime's range (0xff00..=0xffff).
use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Sentinel(u32);

impl DeviceTask for Sentinel {
    const ID: TaskId = TaskId(0xffff);
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        Ok(0)
    }
}

resident_device::task_set! {
    pub struct Reserved { Sentinel }
}

fn main() {}
