//! The kernel image of the lying task types (`lying-tasks-device`), and what the tests
//! expect of each: a model of what a declaration grants, written from the docs
//! (`resident_device::TaskCx::view`, `TaskCx::spawn`), not from the runtime's code.

use lying_tasks_device::{Lie, mode, op};
use resident::{KernelImage, Slice};

/// The image of the set `Liars`.
pub fn image() -> KernelImage {
    resident::kernel_image!("liars")
}

/// The mode a [`Lie`] declares its slice `i` in.
pub fn declared_mode(l: &Lie, i: usize) -> u32 {
    (l.modes >> (2 * i)) & 3
}

/// Whether `inner` lies within `outer` (same buffer, offsets and lengths in range).
pub fn within(inner: Slice<u32>, outer: Slice<u32>) -> bool {
    inner.handle == outer.handle
        && outer.offset <= inner.offset
        && inner.offset as u64 + inner.len as u64 <= outer.offset as u64 + outer.len as u64
}

/// Whether `l`'s declaration grants `act` the access `need` (a [`mode`] that must be
/// granted: `READ` by any declared mode, `ATOMIC` by `ATOMIC` or `WRITE`, `WRITE` by
/// `WRITE` alone), through one declared slice.
pub fn grants(l: &Lie, act: Slice<u32>, need: u32) -> bool {
    (0..2).any(|i| {
        let m = declared_mode(l, i);
        let ok = match need {
            mode::READ => m != mode::NONE,
            mode::ATOMIC => m == mode::ATOMIC || m == mode::WRITE,
            _ => m == mode::WRITE,
        };
        ok && within(act, l.decl[i])
    })
}

/// Whether the device should run `l` to the end (`true`) or refuse it with
/// `Status::Undeclared` (`false`), by its declaration and what it does. Its slices are
/// taken to name live buffers (the host checked the declared ones).
pub fn allowed(l: &Lie) -> bool {
    match l.op {
        op::READ => grants(l, l.act, mode::READ),
        // A view is refused unless declared; each element access, unless granted (an
        // empty view has none); a pointer for writing, unless granted.
        op::WRITE if l.act.len == 0 => grants(l, l.act, mode::READ),
        op::ATOMIC if l.act.len == 0 => grants(l, l.act, mode::READ),
        op::WRITE | op::RAW_WRITE => grants(l, l.act, mode::WRITE),
        op::ATOMIC => grants(l, l.act, mode::ATOMIC),
        // The child declares `act` for writing: the parent must declare its type and
        // grant it `act` for writing.
        op::SPAWN => l.modes & mode::SPAWNS != 0 && grants(l, l.act, mode::WRITE),
        op::SIGNAL => l.modes & mode::COUNTER != 0,
        _ => true,
    }
}

/// The value [`op::WRITE`], [`op::RAW_WRITE`] and a spawned child write.
pub const MARK: u32 = lying_tasks_device::MARK;
