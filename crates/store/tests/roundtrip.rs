//! Records of every kind go in and come back as they were; history filters
//! and orders them.

mod common;

use common::{record, same};
use iolab_store::{time, Filter, Kind, Record, Store};

#[test]
fn every_kind_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let mut ids = Vec::new();
    for (i, kind) in Kind::ALL.into_iter().enumerate() {
        let rec = record(kind, i as u64);
        let id = store.insert(&rec).unwrap();
        ids.push((id, rec));
    }
    for (id, rec) in &ids {
        let back = store.get(*id).unwrap().expect("stored");
        assert_eq!(back.id, *id);
        assert!(same(&back.record, rec), "{:#?}\n{:#?}", back.record, rec);
    }
    // The run's result is a RunResult again, equal to what was stored.
    let run = store.get(ids[0].0).unwrap().unwrap();
    assert_eq!(run.record.kind, Kind::Run);
    assert_eq!(run.record.run_result().unwrap(), common::run_result(0));
    assert_eq!(store.get(9999).unwrap(), None);
    assert_eq!(store.len().unwrap(), 5);
    let all = store.all().unwrap();
    let all_ids: Vec<i64> = all.iter().map(|s| s.id).collect();
    assert_eq!(all_ids, ids.iter().map(|(i, _)| *i).collect::<Vec<_>>());
}

#[test]
fn records_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let rec = record(Kind::Quick, 3);
    let id = Store::open(&path).unwrap().insert(&rec).unwrap();
    let store = Store::open(&path).unwrap();
    assert!(same(&store.get(id).unwrap().unwrap().record, &rec));
}

#[test]
fn for_run_stores_the_result_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let result = common::run_result(7);
    let rec = Record::for_run(&result).unwrap();
    assert!(time::parse_rfc3339(&rec.time).is_some(), "{}", rec.time);
    let id = store.insert(&rec).unwrap();
    let back = store.get(id).unwrap().unwrap();
    assert_eq!(back.record.run_result().unwrap(), result);
}

#[test]
fn history_filters_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let mut ids = Vec::new();
    for seed in 0..6u64 {
        let kind = if seed % 2 == 0 {
            Kind::Run
        } else {
            Kind::Quick
        };
        let mut rec = record(kind, seed);
        rec.tags = vec![format!("t{}", seed % 3)];
        if seed >= 4 {
            rec.provenance.fs_type = "xfs".into();
            rec.target = "/srv/xfs/test".into();
        }
        ids.push(store.insert(&rec).unwrap());
    }
    let list =
        |f: Filter| -> Vec<i64> { store.history(&f).unwrap().iter().map(|e| e.id).collect() };
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(list(Filter::default()), newest_first);
    assert_eq!(
        list(Filter {
            kind: Some(Kind::Quick),
            ..Filter::default()
        }),
        vec![ids[5], ids[3], ids[1]]
    );
    assert_eq!(
        list(Filter {
            tag: Some("t1".into()),
            ..Filter::default()
        }),
        vec![ids[4], ids[1]]
    );
    assert_eq!(
        list(Filter {
            fs_type: Some("xfs".into()),
            ..Filter::default()
        }),
        vec![ids[5], ids[4]]
    );
    assert_eq!(
        list(Filter {
            target: Some("srv/x".into()),
            kind: Some(Kind::Run),
            ..Filter::default()
        }),
        vec![ids[4]]
    );
    // Records are a minute apart from 1_763_800_000.
    assert_eq!(
        list(Filter {
            since: Some(1_763_800_000 + 3 * 60),
            ..Filter::default()
        }),
        vec![ids[5], ids[4], ids[3]]
    );
    assert_eq!(
        list(Filter {
            limit: Some(2),
            ..Filter::default()
        }),
        vec![ids[5], ids[4]]
    );
    // A target with SQL pattern characters is matched literally.
    assert!(list(Filter {
        target: Some("%".into()),
        ..Filter::default()
    })
    .is_empty());
    let entry = &store.history(&Filter::default()).unwrap()[0];
    assert_eq!(entry.fs_type, "xfs");

    assert_eq!(entry.host, "bench1");
    assert_eq!(entry.metrics[0].name, "read MB/s");
    assert_eq!(entry.tags, vec!["t2".to_string()]);
}

#[test]
fn a_comparison_is_found_by_each_of_its_filesystems() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let mut cmp = record(Kind::Compare, 9);
    cmp.provenance.fs_type = "ext4,xfs,btrfs".into();
    cmp.target = "ext4=loop image, xfs=loop image, btrfs=loop image".into();
    let id = store.insert(&cmp).unwrap();
    let mut one = record(Kind::Run, 10);
    one.provenance.fs_type = "ext4".into();
    let run = store.insert(&one).unwrap();
    let list = |fs: &str| -> Vec<i64> {
        let f = Filter {
            fs_type: Some(fs.into()),
            ..Filter::default()
        };
        store.history(&f).unwrap().iter().map(|e| e.id).collect()
    };
    assert_eq!(list("ext4"), [run, id]);
    assert_eq!(list("xfs"), [id]);
    assert_eq!(list("btrfs"), [id]);
    // A part of a name, or of the list, finds nothing.
    assert!(list("ext").is_empty());
    assert!(list("4,xfs").is_empty());
}

#[test]
fn bad_record_fields_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("r.db")).unwrap();
    let mut rec = record(Kind::Meta, 1);
    rec.time = "yesterday".into();
    let err = store.insert(&rec).unwrap_err().to_string();
    assert!(err.contains("'yesterday'"), "{err}");
    let mut rec = record(Kind::Meta, 1);
    rec.metrics[0].samples = Some(vec![1.0, f64::INFINITY]);
    let err = store.insert(&rec).unwrap_err().to_string();
    assert!(err.contains("read MB/s"), "{err}");
    assert_eq!(store.len().unwrap(), 0, "nothing half-written");
}
