//! Helpers the core test binaries share: a fixed host context, and running
//! job text through the plan and the run.
#![allow(dead_code)]

use std::sync::atomic::AtomicBool;

use iolab_core::plan;
use iolab_core::run::{run, Notice, RunOutcome};
use iolab_spec::{resolve, Context, Host};

/// A host with fixed facts, so keyword values do not depend on the machine.
pub fn ctx() -> Context {
    Context::fixed(Host::EXAMPLE)
}

/// Parses, plans and runs job text; the outcome and the notices it gave.
pub fn run_text(text: &str) -> (RunOutcome, Vec<Notice>) {
    let set = resolve::parse_text("job.fio", text, &ctx()).expect("job parses");
    let p = plan::build(&set).expect("plan builds");
    let stop = AtomicBool::new(false);
    let mut notices = Vec::new();
    let out = run(&p, &stop, &mut |n| notices.push(n)).expect("run starts");
    (out, notices)
}
