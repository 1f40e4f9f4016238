//! `mark`: atomically increments one `u32` counter; the exactly-once witness in tests.

use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{Mark, ids};
use crate::{DeviceTask, TaskCx, arch};

impl DeviceTask for Mark {
    const ID: TaskId = ids::MARK;
    // SAFETY: for any arguments, `run` views `marks`, declared `atomic`, and updates it atomically: exactly what `declare` names.
    const DECLARATION_CHECK: crate::DeclarationCheck = unsafe { crate::DeclarationCheck::vouched() };
    const RELAY: bool = true;
    #[inline]
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.atomic(self.marks);
        if self.index >= self.marks.len { Err(ArgError::IndexOutOfRange { index: self.index, len: self.marks.len }) } else { Ok(()) }
    }
    #[inline(always)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let marks = cx.view(self.marks)?;
        let index = self.index;
        if index >= marks.len() {
            return Err(Status::OutOfRange);
        }
        let mut old = 0;
        if arch::lane_id() == 0 {
            // Relaxed, .gpu: a counter; kernel exit or the completion's release orders it
            // before the host reads the buffer. In range: checked above.
            old = marks.atomic_add(index, 1).unwrap_or(0);
        }
        Ok(arch::shfl_idx(old, 0) as u64)
    }
}
