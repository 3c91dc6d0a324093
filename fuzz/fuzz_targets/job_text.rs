//! Fuzz target for the job parser: any text either resolves to jobs or is
//! refused with an error; it never panics. Text that resolves prints back
//! (as `--parse-only` prints it and as a kept result stores it) to text
//! that resolves to the same jobs.
#![no_main]

use iolab_spec::{resolve, Context, Host};
use libfuzzer_sys::fuzz_target;

fn ctx() -> Context {
    let mut ctx = Context::fixed(Host {
        page_size: 4096,
        mb_memory: 1024,
        ncpus: 2,
    });
    // Variables whose values hold the characters job text cannot carry.
    for (k, v) in [
        ("SIZE", "64m"),
        ("SEMI", "a;b"),
        ("HASH", "a#b"),
        ("NL", "a\nb"),
        ("DOLLAR", "${"),
        ("BR", "x]"),
    ] {
        ctx.vars.insert(k.to_string(), v.to_string());
    }
    ctx
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = ctx();
    if let Ok(jobs) = resolve::parse_text("fuzz.fio", text, &ctx) {
        let printed = jobs.to_job_text();
        match resolve::parse_text("printed.fio", &printed, &ctx) {
            Ok(again) => assert!(again == jobs, "printed jobs differ:\n{printed}"),
            Err(e) => panic!("printed jobs do not parse: {e}\n{printed}"),
        }
    }
});
