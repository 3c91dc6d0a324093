//! Ctrl-C for every subcommand: the first one raises `STOP`, which the
//! workers check at their next I/O (partial results are printed and
//! cleanup runs); a second one runs the subcommand's last-resort cleanup
//! and exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Raised by the first Ctrl-C.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// What to undo before exiting on a second Ctrl-C.
static LAST_RESORT: OnceLock<Box<dyn Fn() + Send + Sync>> = OnceLock::new();

/// Starts watching for Ctrl-C. `last_resort` runs (once) before the exit
/// a second Ctrl-C forces: remove a test file, say.
pub fn watch(last_resort: Option<Box<dyn Fn() + Send + Sync>>) {
    if let Some(f) = last_resort {
        let _ = LAST_RESORT.set(f);
    }
    let count = iolab_engine::host::install_interrupt_handler();
    std::thread::Builder::new()
        .name("interrupts".into())
        .spawn(move || loop {
            let n = count.load(Ordering::Relaxed);
            if n >= 1 {
                STOP.store(true, Ordering::Relaxed);
            }
            if n >= 2 {
                eprintln!("iolab: interrupted twice; exiting now");
                if let Some(f) = LAST_RESORT.get() {
                    f();
                }
                std::process::exit(130);
            }
            std::thread::sleep(Duration::from_millis(20));
        })
        .ok();
}
