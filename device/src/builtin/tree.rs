//! `tree`: one node of a tree of tasks grown on the device; marks its node, then pushes
//! its children. Tests and benchmarks device-side follow-up tasks: every node must be
//! marked exactly once, and the host's ticket must wait for the whole tree.

use resident_shared::builtin::irregular_fanout;
use resident_shared::{ArgError, Declare, Status, TaskId};

use super::{MAX_TREE_FANOUT, Tree, ids};
use crate::{DeviceTask, TaskCx, arch};

impl DeviceTask for Tree {
    const ID: TaskId = ids::TREE;
    // SAFETY: for any arguments, `run` views `marks` (declared `atomic`), updates it atomically, and pushes `Tree`s (declared) over the same `marks`, whose declarations are its own: exactly what `declare` names.
    const DECLARATION_CHECK: crate::DeclarationCheck = unsafe { crate::DeclarationCheck::vouched() };

    /// The node's children touch the same slice; the whole subtree must fit it.
    #[inline]
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        d.atomic(self.marks);
        d.spawns(Self::ID);
        let (node, depth, fanout, len) = (self.node, self.depth, self.fanout, self.marks.len);
        if depth > 0 && !(1..=MAX_TREE_FANOUT).contains(&fanout) {
            return Err(ArgError::Bad("tree fanout must be 1 to 16"));
        }
        if self.irregular > 1 {
            return Err(ArgError::Bad("tree shape must be 0 (full) or 1 (irregular)"));
        }
        // The last node of the subtree must fit the slice.
        let mut last = node as u64;
        for _ in 0..depth {
            last = last * fanout as u64 + fanout as u64;
            if last >= len as u64 {
                break;
            }
        }
        if last >= len as u64 { Err(ArgError::IndexOutOfRange { index: last.min(u32::MAX as u64) as u32, len }) } else { Ok(()) }
    }

    // Out of line: the spawn path stays out of the persistent loop's registers.
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let (node, depth, fanout) = (self.node, self.depth, self.fanout);
        let marks = cx.view(self.marks)?;
        if node >= marks.len() {
            return Err(Status::OutOfRange);
        }
        if depth > 0 && (fanout == 0 || fanout > MAX_TREE_FANOUT) || self.irregular > 1 {
            return Err(Status::BadArgs);
        }
        if arch::lane_id() == 0 {
            // Relaxed, .gpu: a counter, published by the completion's release.
            marks.atomic_add(node, 1)?;
        }
        if depth == 0 {
            return Ok(0);
        }
        let children = if self.irregular != 0 { irregular_fanout(node, fanout) } else { fanout };
        // The last child must lie in the slice (the declaration bounds the subtree by
        // the full tree's numbers; an irregular tree's are a subset of them).
        if node as u64 * fanout as u64 + children as u64 >= marks.len() as u64 {
            return Err(Status::OutOfRange);
        }
        // One push for all the children: a range of the spawn ring, a lane each.
        cx.spawn_each(children, |k| Tree { node: node * fanout + 1 + k, depth: depth - 1, ..*self })?;
        Ok(children as u64)
    }
}
