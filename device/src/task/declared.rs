//! [`Declared`]: the running task's declaration, which the device holds it to.
//!
//! The host checks a task's declaration before submission (host/image/validate.rs); what the
//! task then touches is decided by its `run`, from the same arguments. This is where the
//! two are made to agree: before a task runs, `task::run_as` collects the declaration
//! of its arguments ([`resident_shared::Collected`]); every slice the task resolves,
//! every counter it reads or signals and every child it pushes is looked up there, and
//! refused with `Status::Undeclared` if it is not granted. A pushed child's whole
//! declaration must lie within its parent's, mode included, so that what the host
//! checked bounds everything the task's subtree touches.
//!
//! Cost: when the task's `run` is inlined into the persistent loop and views what its
//! `declare` names, the collected items stay in registers and most comparisons fold
//! away; a `run` kept out of line reads a few items from the stack per look-up. What is
//! left still moves ptxas's register allocation of the loop (sm_90: the conv + BN
//! image's loop spills 68 bytes against 4, the built-in set's, whose types vouch
//! (`DeclarationCheck::vouched`), 24 against 20). No call through a pointer: an
//! indirect call anywhere in the kernel's call graph made ptxas spill the built-in
//! loop 144 bytes.

use resident_shared::{Access, Collected, Declare, Grant};

use super::DeviceTask;

/// What a running task is held to: its collected declaration; nothing (a null pointer);
/// or everything, for a type whose runs its author vouched for
/// (`DeclarationCheck::vouched`: the address of [`EVERYTHING`], never read). One
/// pointer, so that a context holding it stays small.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Declared(*const Collected);

/// The sentinel whose address stands for "everything".
static EVERYTHING: Collected = Collected::new();

impl Declared {
    /// Grants nothing (a context that runs no task of a set: the loop's own).
    pub const NONE: Self = Self(core::ptr::null());

    /// Grants everything.
    pub const EVERYTHING: Self = Self(&EVERYTHING);

    /// The declaration `items` holds.
    ///
    /// # Safety
    /// `items` must stay readable while the `Declared` (or a context holding it) is
    /// used: the running task's, for its run.
    #[inline(always)]
    pub unsafe fn of(items: &Collected) -> Self {
        Self(items)
    }

    /// What the declaration grants `want` (the union over its items).
    #[inline(always)]
    pub fn grant(&self, want: Access) -> Grant {
        if core::ptr::eq(self.0, &EVERYTHING) {
            return Grant::ALL;
        }
        if self.0.is_null() {
            return Grant::NONE;
        }
        // SAFETY: a table readable for the run (`Declared::of`'s contract).
        unsafe { &*self.0 }.grant(want)
    }

    /// Whether everything `child` declares lies within this declaration, each slice in
    /// a mode this one grants and each counter named here. The types a child may push
    /// in turn are its own to declare: it is held to them when it pushes.
    #[inline(always)]
    pub fn covers<C: DeviceTask>(&self, child: &C) -> bool {
        if *self == Self::EVERYTHING {
            return true;
        }
        let mut c = Collected::new();
        // A declaration's own verdict (`Err`) is not the device's to act on.
        let _ = child.declare(&mut Declare::collect(&mut c));
        match c.items() {
            Some(items) => items.iter().all(|a| matches!(a, Access::Spawns(_)) || self.grant(*a).allows(*a)),
            None => false,
        }
    }
}
