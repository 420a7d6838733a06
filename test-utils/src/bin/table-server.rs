//! `table-server`: the in-memory Table service of `table_model_test_utils::service` as a process, for scripts,
//! `tablectl` and the Python SDK. Prints its port on standard output, then serves
//! `http://127.0.0.1:<port>/devstoreaccount1` (any account key: it checks no signature) until its standard input
//! closes.
//!
//! ```text
//! table-server [--latency-query MS] [--latency-write MS] [--throttle ENTITIES_PER_S] [--seed TABLE:ENTITIES:PARTITIONS]... [--log]
//! ```

use std::time::{Duration, Instant};
use table_model_test_utils::loopback;
use table_model_test_utils::service::{Options, Request, Service};

const USAGE: &str = "usage: table-server [--latency-query MS] [--latency-write MS] [--throttle ENTITIES_PER_S] \
                     [--seed TABLE:ENTITIES:PARTITIONS]... [--log]
  Serves an in-memory Table service at http://127.0.0.1:<port>/devstoreaccount1, printing <port> on stdout,
  until stdin closes. GET /stats answers what it did, as JSON.
  --latency-query MS   each read's answer waits MS milliseconds (a page, an entity, the table list)
  --latency-write MS   each write's answer waits MS milliseconds (an entity, a transaction, a table)
  --throttle N         each partition takes N entities a second in writes; past that, 503 ServerBusy
  --seed T:E:P         a table T of E entities in P partitions, made at the start (may repeat)
  --log                each request on stderr as it arrives: milliseconds since the start, method, path, query";

/// What the command line asks for.
struct Args {
    options: Options,
    log: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut options = Options::default();
    let mut log = false;
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        if flag == "--log" {
            log = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        let number = |what: &str| value.parse::<u64>().map_err(|e| format!("{what} `{value}`: {e}"));
        match flag.as_str() {
            "--latency-query" => options.latency_query = Duration::from_millis(number("--latency-query")?),
            "--latency-write" => options.latency_write = Duration::from_millis(number("--latency-write")?),
            "--throttle" => {
                let n = number("--throttle")?;
                options.throttle = Some(u32::try_from(n).map_err(|_| format!("--throttle `{value}` is too large"))?);
            }
            "--seed" => options.seed.push(value.parse()?),
            _ => return Err(format!("unknown argument `{flag}`")),
        }
    }
    Ok(Args { options, log })
}

fn main() {
    let Args { options, log } = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return;
        }
        Err(message) => {
            eprintln!("table-server: {message}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let service = Service::new(options);
    let started = Instant::now();
    loopback::serve_child(move |_port| {
        move |request: &Request| {
            if log {
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                eprintln!("{ms:9.1} {} {}?{}", request.method, request.path(), request.query());
            }
            service.answer(request)
        }
    });
}
