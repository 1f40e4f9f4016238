//! `spin`: holds its warp for a given time on the device clock, for latency and
//! load-balance tests. Leaves early, with `Aborted`, when the runtime aborts, and with
//! `Cancelled` when its ticket is cancelled.

use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{Spin, ids};
use crate::{DeviceTask, TaskCx, arch};

impl DeviceTask for Spin {
    const ID: TaskId = ids::SPIN;
    // SAFETY: for any arguments, `run` touches nothing: exactly what `declare` names.
    const DECLARATION_CHECK: crate::DeclarationCheck = unsafe { crate::DeclarationCheck::vouched() };
    #[inline]
    fn declare(&self, _: &mut Declare<'_>) -> Result<(), ArgError> {
        Ok(())
    }
    #[inline(always)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let nanos = self.nanos;
        let start = arch::globaltimer();
        loop {
            let spent = arch::globaltimer().wrapping_sub(start);
            if spent >= nanos {
                return Ok(spent);
            }
            if cx.aborting() {
                return Err(Status::Aborted);
            }
            if arch::shfl_idx(cx.cancelled() as u32, 0) != 0 {
                return Err(Status::Cancelled);
            }
            arch::nanosleep((nanos - spent).min(1_000) as u32);
        }
    }
}
