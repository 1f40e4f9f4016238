//! What a task set refuses at compile time (trybuild): two task types with one id, a
//! task type whose arguments do not fit a task, an id of the runtime's range; and a task
//! that keeps a copy of its context past its run.

#[test]
fn task_sets_refuse_at_compile_time() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
