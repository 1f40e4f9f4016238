//! `forward`: pushes leaves of a tree into another runtime through a link. Tests and
//! benchmarks links (`TaskCx::push_to`): every leaf must be marked exactly once in the
//! other runtime's buffer.

use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{Forward, MAX_FORWARD, Tree, ids};
use crate::{DeviceTask, TaskCx};

impl DeviceTask for Forward {
    const ID: TaskId = ids::FORWARD;
    // SAFETY: for any arguments, `run` touches nothing of this runtime: it pushes through a link, and the other runtime checks what it pushes: exactly what `declare` names.
    const DECLARATION_CHECK: crate::DeclarationCheck = unsafe { crate::DeclarationCheck::vouched() };

    /// Touches nothing of this runtime: `marks` is the other runtime's, checked there.
    #[inline]
    fn declare(&self, _d: &mut Declare<'_>) -> Result<(), ArgError> {
        if !(1..=MAX_FORWARD).contains(&self.count) {
            return Err(ArgError::Bad("forward count must be 1 to 1024"));
        }
        Ok(())
    }

    #[inline(always)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        if !(1..=MAX_FORWARD).contains(&self.count) {
            return Err(Status::BadArgs);
        }
        for k in 0..self.count {
            let node = self.first.wrapping_add(k);
            cx.push_to(self.link, &Tree { marks: self.marks, node, depth: 0, fanout: 1, irregular: 0 })?;
        }
        Ok(self.count as u64)
    }
}
