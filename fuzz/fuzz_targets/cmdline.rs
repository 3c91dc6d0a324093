//! Fuzz target for the command-line side of the job parser: the input,
//! split at NUL bytes, is the argument list of `iolab run`. It resolves to
//! jobs or is refused, never panics; what resolves prints back (as
//! `--parse-only` prints it and as a kept result stores it) to text that
//! resolves to the same jobs. Arguments that name job files are read from
//! the current directory, within the reader's limits.
#![no_main]

use iolab_spec::{cmdline, resolve, Context, Host};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let args: Vec<String> = text.split('\0').map(String::from).collect();
    let mut ctx = Context::fixed(Host {
        page_size: 4096,
        mb_memory: 1024,
        ncpus: 2,
    });
    ctx.vars.insert("SIZE".to_string(), "64m".to_string());
    let Ok(cmd) = cmdline::parse_args(&args) else {
        return;
    };
    if let Ok(jobs) = resolve::load(&cmd, &ctx) {
        let printed = jobs.to_job_text();
        match resolve::parse_text("printed.fio", &printed, &ctx) {
            Ok(again) => assert!(again == jobs, "printed jobs differ:\n{printed}"),
            Err(e) => panic!("printed jobs do not parse: {e}\n{printed}"),
        }
    }
});
