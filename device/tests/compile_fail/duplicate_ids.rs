// Two task types of one set share an id: refused when the set is declared.
use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct A(u32);
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct B(u32);

impl DeviceTask for A {
    const ID: TaskId = TaskId(0x300);
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        Ok(0)
    }
}
impl DeviceTask for B {
    const ID: TaskId = TaskId(0x300);
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        Ok(0)
    }
}

resident_device::task_set! {
    pub struct Clash { A, B }
}

fn main() {}
