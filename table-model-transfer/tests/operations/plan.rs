//! A scan by ranges plans while it reads its first range (`scan::plan_reading`): a table of one or two pages is
//! read whole with the requests a scan of one range sends, and a larger one gets every entity exactly once
//! though its first range ends at a key read (which the next range reads again).

use super::{entities, exported, filled, keys_of, service, temp_dir, Recorder};
use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::sync::Arc;
use table_model_transfer::count::count;
use table_model_transfer::export::{export, ExportOptions, ExportTarget};
use table_model_transfer::format::FileFormat;
use table_model_transfer::progress::Control;

fn n(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// The queries among `queries` that are probes of a plan (`$top=1`) and pages of keys (`$top=1000`).
fn probes_and_key_pages(queries: &[String]) -> (usize, usize) {
    let top = |q: &String, n: &str| q.replace("%24", "$").split('&').any(|p| p == format!("$top={n}"));
    let probes = queries.iter().filter(|q| top(q, "1")).count();
    let keys = queries.iter().filter(|q| top(q, "1000")).count();
    (probes, keys)
}

#[tokio::test]
async fn a_scan_plans_while_it_reads_its_first_range() {
    let recorder = Arc::new(Recorder::default());
    let Some(service) = service(&recorder) else { return };
    // Pages of 1,000: one page, two, and seven (in partitions of 100 entities).
    for (partitions, per) in [(5, 100), (18, 100), (70, 100)] {
        let all = entities(partitions, per);
        let total = all.len() as u64;
        let table = filled(&service, &format!("TransferPlan{partitions}"), &all).await;
        let expected = keys_of(&table).await;

        // A count of one range is the baseline of requests.
        recorder.take_queries();
        assert_eq!(count(&table, None, n(1), &Control::new()).await.unwrap(), total);
        let one_range = recorder.take_queries().len();
        assert_eq!(one_range, all.len().div_ceil(1000), "{total} entities: pages of 1,000");
        assert_eq!(count(&table, None, n(8), &Control::new()).await.unwrap(), total);
        let queries = recorder.take_queries();
        let (probes, key_pages) = probes_and_key_pages(&queries);
        if total <= 2000 {
            // Read whole while planning: the pages of one range, and no page of keys. A table of two pages may
            // have seen the first round of probes (at most 8) sent beside its second page.
            assert_eq!((queries.len() - probes, key_pages), (one_range, 0), "{total}: {queries:#?}");
            assert!(probes <= if total <= 1000 { 0 } else { 8 }, "{total}: {queries:#?}");
        } else {
            // Probes after the first page, and no page of keys: the first page's keys are the plan's.
            assert!(probes > 0 && key_pages == 0, "{total}: {queries:#?}");
        }

        // An export into a directory: every entity exactly once, the first range ending at a key read.
        let dir = temp_dir(&format!("plan-{partitions}"));
        let options = ExportOptions::default().parallel(n(8));
        let summary = export(&table, ExportTarget::Dir(dir.clone()), &options, &Control::new()).await.unwrap();
        assert_eq!(summary.entities, total);
        let lines = exported(&dir);
        let unique: BTreeSet<String> = lines.iter().cloned().collect();
        assert_eq!((lines.len(), unique.len()), (all.len(), all.len()), "{total}: every entity exactly once");
        assert_eq!(unique, expected);
        let manifest = table_model_transfer::manifest::Manifest::read(&dir).unwrap();
        if total <= 2000 {
            assert_eq!(manifest.files.len(), 1, "{total}: one range");
        } else {
            // The first range ends before the last key of the second page, the 2,000th, which the next range
            // starts with.
            let key =
                |i: usize| expected.iter().nth(i).unwrap().split_once('|').map(|(p, r)| (p.to_owned(), r.to_owned()));
            let keys = |k: &Option<table_model_transfer::format::Keys>| {
                k.as_ref().map(|k| (k.partition_key.clone(), k.row_key.clone()))
            };
            let first = manifest.files.iter().find(|f| keys(&f.first) == key(0)).unwrap();
            assert_eq!((first.entities, keys(&first.last)), (1999, key(1998)), "{total}: {first:?}");
            assert!(manifest.files.iter().any(|f| keys(&f.first) == key(1999)), "{total}: {:?}", manifest.files);
        }
        std::fs::remove_dir_all(&dir).unwrap();

        // The pages read while planning are written through the format's own reader, as the scan's are: each
        // format's file is the one a single range writes (byte for byte when the table was read whole while
        // planning, else the same lines in another order).
        for format in [FileFormat::Jsonl, FileFormat::Csv, FileFormat::Parquet] {
            let dir = temp_dir(&format!("plan-{partitions}-{}", format.extension()));
            std::fs::create_dir_all(&dir).unwrap();
            let file = |parallel| {
                let path = dir.join(format!("p{parallel}.{}", format.extension()));
                let options = ExportOptions { format, parallel: n(parallel), ..Default::default() };
                let table = &table;
                async move {
                    let summary =
                        export(table, ExportTarget::File(path.clone()), &options, &Control::new()).await.unwrap();
                    assert_eq!(summary.entities, total, "{format:?} at --parallel {parallel}");
                    std::fs::read(&path).unwrap()
                }
            };
            let (one, eight) = (file(1).await, file(8).await);
            if total <= 2000 {
                assert!(one == eight, "{total}, {format:?}: the same bytes with one range and with eight");
            } else if format == FileFormat::Jsonl {
                let sorted = |bytes: &[u8]| {
                    let mut lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
                    lines.sort();
                    lines
                };
                assert!(sorted(&one) == sorted(&eight), "{total}: the same lines with one range and with eight");
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
        table.delete_table(None).await.unwrap();
    }
}
