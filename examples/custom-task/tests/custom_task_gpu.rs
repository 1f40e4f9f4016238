//! User tasks on a CUDA GPU: the same scenarios as the CPU tests, on the persistent
//! kernel compiled from the example's device crate. Ignored by default (CI has no GPU);
//! run with `cargo test --release -p custom-task --test custom_task_gpu --
//! --include-ignored --test-threads=1`. Without a GPU these tests fail.

#[macro_use]
mod gpu_turns;
mod common;

use resident::{BackendKind, Runtime};

fn gpu(image: resident::KernelImage) -> Runtime {
    let rt = Runtime::builder().kernel(image).backend(BackendKind::Cuda).build().expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

gpu_test!(host_fed_batches, common::host_fed_batches(&gpu(custom_task::image())));
gpu_test!(lone_task, common::lone_task(&gpu(custom_task::image())));
gpu_test!(toolbox, common::toolbox(&gpu(custom_task::image())));
gpu_test!(resident_list, common::resident_list(&gpu(custom_task::image())));
gpu_test!(spawned_on_device, common::spawned_on_device(&gpu(custom_task::image())));
gpu_test!(counters_join_stages, common::counters_join_stages(&gpu(custom_task::image())));
// More waiting tasks than the runtime has worker warps (2112 on the H100s and H200s used here).
gpu_test!(children_join_by_counter, common::children_join_by_counter(&gpu(custom_task::image()), 3000));
gpu_test!(mixed_types_in_one_batch, common::mixed_types_in_one_batch(&gpu(custom_task::image())));
gpu_test!(declared_slices_checked, common::declared_slices_checked(&gpu(custom_task::image())));
gpu_test!(set_without_builtins, common::set_without_builtins(&gpu(custom_task::image_without_builtins())));
