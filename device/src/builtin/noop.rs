//! `noop`: the smallest task, for measuring dispatch cost. Echoes its tag.

use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{Noop, ids};
use crate::{DeviceTask, TaskCx};

impl DeviceTask for Noop {
    const ID: TaskId = ids::NOOP;
    // SAFETY: for any arguments, `run` touches nothing: exactly what `declare` names.
    const DECLARATION_CHECK: crate::DeclarationCheck = unsafe { crate::DeclarationCheck::vouched() };
    const RELAY: bool = true;
    const PURE: bool = true;
    #[inline]
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    #[inline(always)]
    fn run(&self, _: &TaskCx) -> Result<u64, Status> {
        Ok(self.tag)
    }
}
