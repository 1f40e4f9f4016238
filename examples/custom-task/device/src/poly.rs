//! A task whose arguments take all 48 bytes a task has: two slices (24 bytes) and six
//! coefficients (24 bytes).

use bytemuck::{Pod, Zeroable};
use resident_device::{ArgError, Declare, DeviceTask, Slice, Status, TaskCx, TaskId};

/// `y[i] = c[0] + c[1] x[i] + ... + c[5] x[i]^5` (Horner's rule); result: the length.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Poly {
    pub x: Slice<f32>,
    pub y: Slice<f32>,
    pub c: [f32; 6],
}

const _: () = assert!(size_of::<Poly>() == resident_device::shared::TASK_ARG_BYTES);

impl DeviceTask for Poly {
    const ID: TaskId = TaskId(0x204);

    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.read(self.x);
        d.write(self.y);
        if self.x.len != self.y.len { Err(ArgError::LengthMismatch(self.x.len, self.y.len)) } else { Ok(()) }
    }

    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let (x, y) = (cx.lookup(self.x), cx.lookup(self.y));
        let (x, y) = (x.view()?, y.view()?);
        if x.len() != y.len() {
            return Err(Status::BadArgs);
        }
        for i in cx.lane_range(x.len()) {
            let v = x.read(i)?;
            let mut acc = self.c[5];
            for k in (0..5).rev() {
                acc = acc * v + self.c[k];
            }
            y.write(i, acc)?;
        }
        Ok(x.len() as u64)
    }
}
