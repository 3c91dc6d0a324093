//! The table itself: every job option iolab accepts, in the order the docs
//! list them. `option_table!` makes the `Opt` enum and the `OPTIONS` array
//! from one list, so an option cannot be in one and missing from the other.

use super::Category as C;
use super::{choice, opt, Choice, Kind, OptDef, Store};
use crate::value::TimeUnit;

macro_rules! option_table {
    ($($id:ident = $def:expr;)*) => {
        /// A job option, by its place in the table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opt { $($id),* }

        impl Opt {
            /// Every option, in table order.
            pub const ALL: &'static [Opt] = &[$(Opt::$id),*];
        }

        /// The entries, indexed by `Opt as usize`.
        pub static OPTIONS: &[OptDef] = &[$($def),*];
    };
}

const SYNC_MODES: &[Choice] = &[
    choice("none", &["0"], "no O_SYNC or O_DSYNC"),
    choice("sync", &["1"], "open with O_SYNC"),
    choice("dsync", &[], "open with O_DSYNC"),
];

option_table! {
    Name = opt("name", Kind::Str, C::Description)
        .help("Name of the job; on the command line each --name starts a new job")
        .example("seqread");
    Description = opt("description", Kind::Str, C::Description)
        .help("Free-text description of the job, printed nowhere but kept with it")
        .example("sequential read of 1 GiB");
    Size = opt("size", Kind::SizePct, C::IoSize)
        .help("Total size of I/O for this job, split over its files; a percentage means that share of the file or device")
        .example("100m");
    Bs = opt("bs", Kind::SizePerDir, C::IoType)
        .aliases(&["blocksize"])
        .default("4k")
        .range(1, i64::MAX)
        .help("Block size of each I/O, per direction (read,write,trim)")
        .example("4k,64k");
    Direct = opt("direct", Kind::Bool, C::Engine)
        .default("0")
        .help("Use non-buffered I/O (O_DIRECT)")
        .example("1");
    Buffered = opt("buffered", Kind::Bool, C::Engine)
        .default("1")
        .store(Store::Inverse(Opt::Direct))
        .help("Use buffered I/O; the opposite of direct")
        .example("0");
    Runtime = opt("runtime", Kind::Time(TimeUnit::Sec), C::Timing)
        .aliases(&["timeout"])
        .default("0")
        .help("Stop the job after this long (0: no limit)")
        .example("20");
    Sync = opt("sync", Kind::Choice(SYNC_MODES), C::Engine)
        .default("none")
        .help("Open files for synchronous writes")
        .example("dsync");
}
