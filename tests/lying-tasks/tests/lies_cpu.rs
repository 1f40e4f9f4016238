//! Tasks whose declarations lie, on the CPU backend (CI): the scenarios of
//! `common/mod.rs`.

mod common;

use resident::{BackendKind, Runtime};

fn cpu() -> Runtime {
    Runtime::builder().kernel(lying_tasks::image()).backend(BackendKind::Cpu).config(|c| c.cpu_workers = 4).build().unwrap()
}

#[test]
fn dropped_buffer_never_reached() {
    common::dropped_buffer_never_reached(&cpu());
}

#[test]
fn declarations_hold() {
    common::declarations_hold(&cpu());
}

#[test]
fn undeclared_counter_refused() {
    common::undeclared_counter_refused(&cpu());
}

#[test]
fn undeclared_children_refused() {
    common::undeclared_children_refused(&cpu());
}

#[test]
fn foreign_type_refused() {
    common::foreign_type_refused(&cpu());
}

#[test]
fn lies_touch_only_declared_memory() {
    let rt = cpu();
    let arena = common::Arena::new(&rt);
    common::lies_touch_only_declared_memory(&rt, &arena, 2000);
}

#[test]
fn a_task_that_panics_is_a_device_fault() {
    common::a_task_that_panics_is_a_device_fault(cpu());
}

#[test]
fn long_declarations_refused() {
    common::long_declarations_refused(&cpu());
}
