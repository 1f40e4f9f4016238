//! Tasks whose declarations lie, on a CUDA GPU: the scenarios of `common/mod.rs` on the
//! persistent kernel compiled from `lying-tasks-device`. Ignored by default (CI has no
//! GPU); run with `cargo test --release -p lying-tasks --test lies_gpu --
//! --include-ignored --test-threads=1`. Without a GPU these tests fail.

// The runtime's own GPU tests take turns the same way.
#[macro_use]
#[path = "../../gpu_turns/mod.rs"]
mod gpu_turns;
mod common;

use resident::{BackendKind, Runtime};

fn gpu() -> Runtime {
    let rt = Runtime::builder().kernel(lying_tasks::image()).backend(BackendKind::Cuda).build().expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

gpu_test!(dropped_buffer_never_reached, common::dropped_buffer_never_reached(&gpu()));
gpu_test!(declarations_hold, common::declarations_hold(&gpu()));
gpu_test!(undeclared_counter_refused, common::undeclared_counter_refused(&gpu()));
gpu_test!(undeclared_children_refused, common::undeclared_children_refused(&gpu()));
gpu_test!(foreign_type_refused, common::foreign_type_refused(&gpu()));
gpu_test!(lies_touch_only_declared_memory, {
    let rt = gpu();
    let arena = common::Arena::new(&rt);
    common::lies_touch_only_declared_memory(&rt, &arena, 2000);
});
gpu_test!(long_declarations_refused, common::long_declarations_refused(&gpu()));
