//! The fused-op examples' tasks and kernels on a CUDA GPU. Ignored by default (CI has
//! no GPU); run with `cargo test --release -p fused-ops --test fused_ops_gpu -- --include-ignored
//! --test-threads=1`. Without a GPU these tests fail.

#[macro_use]
mod gpu_turns;
mod common;

use fused_ops::ConvGeom;
use fused_ops::rnn::RnnShape;
use resident::{BackendKind, Runtime, RuntimeConfig};

fn gpu_nn() -> Runtime {
    let rt = Runtime::with_config(fused_ops::config(BackendKind::Cuda)).expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

fn gpu_conv_bn() -> Runtime {
    let rt = Runtime::with_config(fused_ops::conv_bn_config(BackendKind::Cuda)).expect("a CUDA GPU");
    eprintln!("{}", rt.backend());
    rt
}

gpu_test!(
    conv_bn_fused_small_odd_shape,
    common::conv_bn_fused_matches_reference(&gpu_nn(), ConvGeom::checked(3, 5, 16, 13, 11).unwrap(), 16, 2_000)
);
gpu_test!(
    conv_bn_fused_full_size,
    common::conv_bn_fused_matches_reference(&gpu_nn(), ConvGeom::checked(32, 64, 64, 56, 56).unwrap(), 3, 4_000)
);
// The same tasks on the image of the conv tile and normalize alone.
gpu_test!(conv_bn_image_small_odd_shape, {
    common::conv_bn_fused_matches_reference(&gpu_conv_bn(), ConvGeom::checked(3, 5, 16, 13, 11).unwrap(), 16, 2_000)
});
gpu_test!(conv_bn_image_full_size, {
    common::conv_bn_fused_matches_reference(&gpu_conv_bn(), ConvGeom::checked(32, 64, 64, 56, 56).unwrap(), 3, 4_000)
});
gpu_test!(conv_bn_image_validated, common::conv_bn_image_validated(&gpu_conv_bn()));
gpu_test!(nn_tasks_validated, common::nn_tasks_validated(&gpu_nn()));
// One persistent kernel at a time: two resident kernels leave no SM for a buffer's memset.
gpu_test!(standard_refuses_nn_tasks, common::standard_refuses_nn_tasks(&Runtime::with_config(RuntimeConfig::cuda()).unwrap()));
gpu_test!(pipeline_counts_exact, common::pipeline_counts_exact(&gpu_nn(), 1 << 20, 1 << 16, 256, 1009));
gpu_test!(
    rnn_matches_reference_small,
    common::rnn_matches_reference(BackendKind::Cuda, RnnShape { hidden: 64, input: 16, batch: 3, steps: 12 })
);
gpu_test!(rnn_matches_reference_h1024, {
    for batch in [1, 8] {
        common::rnn_matches_reference(BackendKind::Cuda, RnnShape { hidden: 1024, input: 256, batch, steps: 200 });
    }
});
gpu_test!(rnn_rejects_bad_input, common::rnn_rejects_bad_input(BackendKind::Cuda));

// The unfused baselines compute the same thing as the fused pass (the benchmark
// compares like with like): three launches, then the graph replayed twice.
gpu_test!(
    conv_bn_stages_match_reference,
    common::conv_bn_stages_match_reference(&gpu_conv_bn(), ConvGeom::checked(4, 16, 32, 28, 28).unwrap(), 2_000)
);
