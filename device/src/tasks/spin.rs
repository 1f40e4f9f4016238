//! `spin`: holds its warp for a given time on the device clock, for latency and
//! load-balance tests. Leaves early, with `Aborted`, when the runtime aborts.

use resident_shared::{Status, Task};

use super::{Outcome, TaskContext};
use crate::arch;

#[inline(always)]
pub fn run(task: &Task, cx: &TaskContext) -> Outcome {
    let nanos = task.arg_u64(0);
    let start = arch::globaltimer();
    loop {
        let spent = arch::globaltimer().wrapping_sub(start);
        if spent >= nanos {
            return Outcome::ok(spent);
        }
        if cx.aborting() {
            return Outcome { status: Status::Aborted, result: spent };
        }
        arch::nanosleep((nanos - spent).min(1_000) as u32);
    }
}
