//! Hostile and careless use of the public API on the CPU backend (the scenarios are
//! in `common/hostile.rs`, the GPU runs them in `hostile_gpu.rs`). Each
//! runs in a child process under a time limit: a crash or a hang fails its test alone.

mod common;

use common::hostile::{self, Make};
use resident::RuntimeConfig;
use std::time::Duration;

fn cpu() -> RuntimeConfig {
    RuntimeConfig { capacity: 1 << 10, cpu_workers: 2, shutdown_timeout: Duration::from_secs(2), ..RuntimeConfig::cpu() }
}

const CPU: Make = Make { base: cpu, other: cpu };

const LIMIT: Duration = Duration::from_secs(60);

isolated_test!(foreign_task_list, LIMIT, hostile::foreign_task_list(CPU));
isolated_test!(second_runtime_on_one_device, LIMIT, hostile::second_runtime_on_one_device(CPU));
isolated_test!(foreign_buffer_refused, LIMIT, hostile::foreign_buffer_refused(CPU));
isolated_test!(foreign_counter_refused, LIMIT, hostile::foreign_counter_refused(CPU));
isolated_test!(stale_handle_never_aliases, LIMIT, hostile::stale_handle_never_aliases(CPU, 140_000));
isolated_test!(timeouts_at_extremes, LIMIT, hostile::timeouts_at_extremes(CPU));
isolated_test!(config_extremes, LIMIT * 2, hostile::config_extremes(CPU));
isolated_test!(ranges_and_sizes_at_extremes, LIMIT, hostile::ranges_and_sizes_at_extremes(CPU));
isolated_test!(try_submit_never_blocks, LIMIT, hostile::try_submit_never_blocks(CPU));
isolated_test!(try_submit_larger_than_ring, LIMIT, hostile::try_submit_larger_than_ring(CPU));
isolated_test!(many_waiters_one_ticket, LIMIT, hostile::many_waiters_one_ticket(CPU));
isolated_test!(close_races_close, LIMIT, hostile::close_races_close(CPU));
isolated_test!(construction_failure_cleans_up, LIMIT, hostile::construction_failure_cleans_up(CPU));
isolated_test!(list_rechecked_each_submit, LIMIT, hostile::list_rechecked_each_submit(CPU));
isolated_test!(nothing_after_close, LIMIT, hostile::nothing_after_close(CPU));
isolated_test!(read_waits_for_writers, LIMIT, hostile::read_waits_for_writers(CPU));
isolated_test!(waiting_task_does_not_wedge, LIMIT, hostile::waiting_task_does_not_wedge(CPU));
isolated_test!(cancel_ends_waiting_and_polling_tasks, LIMIT, hostile::cancel_ends_waiting_and_polling_tasks(CPU));
isolated_test!(drops_never_wait, LIMIT, hostile::drops_never_wait(CPU));
isolated_test!(large_trees_complete, LIMIT, hostile::large_trees_complete(CPU));
isolated_test!(large_batches_do_not_hold_the_helpers, LIMIT, hostile::large_batches_do_not_hold_the_helpers(CPU));
isolated_test!(open_reservation_waits_refused, LIMIT, hostile::open_reservation_waits_refused(CPU));
isolated_test!(reads_after_a_fault_answer_it, LIMIT, hostile::reads_after_a_fault_answer_it(CPU));
isolated_test!(stale_counter_never_aliases, LIMIT, hostile::stale_counter_never_aliases(CPU, 70_000));
