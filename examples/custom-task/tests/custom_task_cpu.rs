//! User tasks on the CPU backend (CI): the example's own task types, compiled for the
//! host, through every path the built-in tasks take.

mod common;

use resident::{BackendKind, Runtime};

fn cpu(image: resident::KernelImage) -> Runtime {
    Runtime::builder().kernel(image).backend(BackendKind::Cpu).config(|c| c.cpu_workers = 4).build().unwrap()
}

#[test]
fn toolbox() {
    common::toolbox(&cpu(custom_task::image()));
}

#[test]
fn host_fed_batches() {
    common::host_fed_batches(&cpu(custom_task::image()));
}

#[test]
fn lone_task() {
    common::lone_task(&cpu(custom_task::image()));
}

#[test]
fn resident_list() {
    common::resident_list(&cpu(custom_task::image()));
}

#[test]
fn spawned_on_device() {
    common::spawned_on_device(&cpu(custom_task::image()));
}

#[test]
fn counters_join_stages() {
    common::counters_join_stages(&cpu(custom_task::image()));
}

#[test]
fn children_join_by_counter() {
    common::children_join_by_counter(&cpu(custom_task::image()), 16);
    // One worker: every task in turn on the same thread, so a split not followed by a
    // look for its children would wait for ever in the first `Total`.
    let one = Runtime::builder().kernel(custom_task::image()).backend(BackendKind::Cpu).config(|c| c.cpu_workers = 1).build().unwrap();
    common::children_join_by_counter(&one, 4);
}

#[test]
fn mixed_types_in_one_batch() {
    common::mixed_types_in_one_batch(&cpu(custom_task::image()));
}

#[test]
fn declared_slices_checked() {
    common::declared_slices_checked(&cpu(custom_task::image()));
}

#[test]
fn set_without_builtins() {
    common::set_without_builtins(&cpu(custom_task::image_without_builtins()));
}
