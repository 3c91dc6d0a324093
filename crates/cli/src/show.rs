//! `iolab show ID`: one stored result re-rendered. A run in any of fio's
//! formats (normal, json, json+, terse); a quick suite, comparison,
//! metadata pass or sweep as its table (table, markdown, csv, json);
//! `record` gives the whole stored record with its provenance as JSON.
//! The normal form opens with where and how the result was measured.

use anyhow::Result;
use clap::Args;
use iolab_store::{Kind, Provenance, Stored};

use crate::exit::Status;
use crate::kinds::{format_names, render_record};
use crate::outargs::{OutputArgs, OutputFormat};
use crate::output;
use crate::readback::{bad, damaged_record, record_value, DbArg};

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The result's id, as `iolab history` lists it
    pub id: i64,
    #[command(flatten)]
    pub db: DbArg,
    /// normal (default), json, json+ or terse for runs; table (normal),
    /// markdown, csv or json for the other kinds; html for a page with
    /// charts; record for the stored record as JSON
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: &ShowArgs) -> Result<Status> {
    if let Err(msg) = output::check_opt(args.out.output.as_deref(), &args.db.db_files()) {
        return bad(&msg);
    }
    let path = args.db.path()?;
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let Some(stored) = store.map(|s| s.get(args.id)).transpose()?.flatten() else {
        eprintln!("iolab: no result {} in {}", args.id, path.display());
        return Ok(Status::Failed);
    };
    let mut format = args.out.format_or(OutputFormat::Normal);
    if format == OutputFormat::Normal && stored.record.kind != Kind::Run {
        format = OutputFormat::Table;
    }
    let text = match format {
        OutputFormat::Record => record_json(&stored).map_err(|e| damaged_record(&path, &e))? + "\n",
        _ => match render_record(&stored, format, args.out.style())
            .map_err(|e| damaged_record(&path, &e))?
        {
            Some(body) if matches!(format, OutputFormat::Normal | OutputFormat::Table) => {
                format!("{}\n{body}", header(&stored))
            }
            Some(body) => body,
            None => {
                return bad(&format!(
                    "output format '{}' does not apply to a {} result (try {})",
                    format.name(),
                    stored.record.kind,
                    format_names(&stored)
                ))
            }
        },
    };
    output::emit(args.out.output.as_deref(), &text)?;
    Ok(Status::Success)
}

/// The whole record as JSON, its result embedded as JSON rather than as
/// a string.
pub fn record_json(s: &Stored) -> Result<String> {
    Ok(serde_json::to_string_pretty(&record_value(s)?)?)
}

/// Where and how the result was measured, for people.
fn header(s: &Stored) -> String {
    let r = &s.record;
    let p: &Provenance = &r.provenance;
    let mut out = format!(
        "Result {}: {} at {}",
        s.id,
        r.kind,
        crate::readback::local_time(&r.time)
    );
    if !r.tags.is_empty() {
        out.push_str(&format!(", tags: {}", r.tags.join(", ")));
    }
    out.push('\n');
    let gib = p.memory_bytes as f64 / (1u64 << 30) as f64;
    out.push_str(&format!(
        "  host {}, kernel {}, {} x{}, {:.1} GiB, iolab {}\n",
        dash(&p.host),
        dash(&p.kernel),
        dash(&p.cpu_model),
        p.cpu_count,
        gib,
        dash(&p.iolab_version)
    ));
    if let Some(vm) = &p.hypervisor {
        out.push_str(&format!("  virtual machine {}\n", vm.describe()));
    }
    let mut dev = dash(&p.block_device).to_string();
    if !p.device_model.is_empty() {
        dev.push_str(&format!(" ({})", p.device_model));
    }
    if let Some(rot) = p.rotational {
        dev.push_str(if rot {
            ", rotational"
        } else {
            ", non-rotational"
        });
    }
    if !p.scheduler.is_empty() {
        dev.push_str(&format!(", scheduler {}", p.scheduler));
    }
    if let Some(size) = p.device_size_bytes {
        dev.push_str(&format!(", {:.1} GB", size as f64 / 1e9));
    }
    out.push_str(&format!(
        "  target {} ({} on {}; {})\n  device {dev}\n",
        dash(&r.target),
        dash(&p.fs_type),
        dash(&p.mount_source),
        dash(&p.mount_options)
    ));
    if !r.command_line.is_empty() {
        out.push_str(&format!("  command {}\n", r.command_line));
    }
    out
}

fn dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}
