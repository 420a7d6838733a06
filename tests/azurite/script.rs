//! `scripts/azurite.sh run` starts an emulator of its own and stops only that one: a `run` that finishes while
//! another command's emulator is in use leaves that emulator running.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use table_model_test_utils::temp_dir::TempDir;

/// `scripts/azurite.sh run` with these arguments; its stderr (the script's notices) goes to `log`.
fn azurite_run(args: &[&str], log: &Path) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/azurite.sh");
    let mut command = Command::new("bash");
    command.arg(script).arg("run").args(args);
    command.stdout(Stdio::null()).stderr(std::fs::File::create(log).expect("log file"));
    command
}

/// Whether an emulator answers HTTP at `http://127.0.0.1:<port>/devstoreaccount1`.
fn answers(endpoint: &str) -> bool {
    let authority = endpoint.trim_start_matches("http://").split('/').next().expect("host:port");
    let Ok(mut stream) = TcpStream::connect(authority) else { return false };
    let timeout = Some(Duration::from_secs(10));
    let _ = stream.set_read_timeout(timeout);
    let _ = stream.set_write_timeout(timeout);
    let request = format!("GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    let mut head = [0u8; 8];
    stream.write_all(request.as_bytes()).is_ok() && stream.read_exact(&mut head).is_ok() && head == *b"HTTP/1.1"
}

fn wait_for_file(path: &Path, first: &mut Child, log: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_owned();
        }
        if let Some(status) = first.try_wait().expect("wait") {
            panic!("the first `run` ended ({status}) before its command started: {}", read(log));
        }
        assert!(Instant::now() < deadline, "the first `run` did not start within 180 s: {}", read(log));
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn read(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn run_stops_only_the_emulator_it_started() {
    // Where the suite runs, the emulator is installed (the suite's own emulator is one `run` or `start` started).
    if crate::support::endpoint().is_none() {
        return;
    }
    let dir = TempDir::new("table-model-azurite-run");
    let (endpoint_file, done_file) = (dir.join("endpoint"), dir.join("done"));
    let (first_log, second_log) = (dir.join("first.log"), dir.join("second.log"));

    // The first command: it writes its emulator's endpoint, then keeps using it until told to finish.
    let wait = r#"printf '%s\n' "$TABLE_MODEL_AZURITE_ENDPOINT" > "$1"; while [ ! -e "$2" ]; do sleep 0.1; done"#;
    let first_args = ["bash", "-c", wait, "first", endpoint_file.to_str().unwrap(), done_file.to_str().unwrap()];
    let mut first = azurite_run(&first_args, &first_log).spawn().expect("bash");
    let endpoint = wait_for_file(&endpoint_file, &mut first, &first_log);
    assert!(answers(&endpoint), "the first `run`'s emulator does not answer at {endpoint}: {}", read(&first_log));

    // A second command runs to its end meanwhile, in the same checkout.
    let second = azurite_run(&["true"], &second_log).status().expect("bash");
    assert!(second.success(), "the second `run` failed: {}", read(&second_log));

    // The first command's emulator is still there for it.
    let still_answers = answers(&endpoint);
    std::fs::write(&done_file, "").expect("done file");
    let first = first.wait().expect("wait");
    assert!(still_answers, "the second `run` stopped the first one's emulator at {endpoint}");
    assert!(first.success(), "the first `run` failed: {}", read(&first_log));
    // And the first `run` stopped its own when its command ended.
    assert!(!answers(&endpoint), "the first `run` left its emulator running at {endpoint}");
}
