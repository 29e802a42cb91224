//! Child processes that die with the process that started them.
//!
//! A child the kit starts (anvil) is stopped on `stop()` and killed on drop, but neither runs
//! when the owning process is itself killed (SIGKILL, a test binary aborted by the harness, an
//! OOM kill): such a child would run on after `make test` has exited. [`spawn`] has the kernel
//! send the child SIGKILL when its parent dies (`PR_SET_PDEATHSIG`).
//!
//! Linux ties that signal to the *thread* that forked the child, not the process: a child
//! spawned from a thread that later exits (a test's thread once the test ends, a tokio
//! blocking-pool thread retired when idle) would be killed early. So every spawn here runs on
//! one thread the kit starts once and never ends, which lives exactly as long as the process.

use std::{
    io,
    os::unix::process::CommandExt,
    process::{Child, Command},
    sync::{mpsc, Mutex, OnceLock},
};

type Job = (Command, mpsc::Sender<io::Result<Child>>);

/// Starts `command` so that it receives SIGKILL when this process dies, however it dies.
pub fn spawn(mut command: Command) -> io::Result<Child> {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (prctl, getppid, _exit).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: then nobody will signal.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .map_err(|_| io::Error::other("the kit's spawner thread lock is poisoned"))?
        .send((command, tx))
        .map_err(|_| io::Error::other("the kit's spawner thread is gone"))?;
    rx.recv().map_err(|_| io::Error::other("the kit's spawner thread dropped a spawn"))?
}

/// The one thread that forks every tied child; it lives as long as the process.
fn spawner() -> &'static Mutex<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("riskgate-kit-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("the kit's spawner thread starts");
        Mutex::new(tx)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A child spawned from a thread that then exits keeps running (the signal is tied to the
    /// spawner thread, not the caller's); it is then stopped here.
    #[test]
    fn a_child_outlives_the_thread_that_asked_for_it() {
        let mut child = std::thread::spawn(|| {
            let mut c = Command::new("sleep");
            c.arg("30");
            spawn(c).expect("sleep starts")
        })
        .join()
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(child.try_wait().unwrap().is_none(), "killed with the thread that asked");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// The owner for the test below, run as a process of its own (this test binary re-run on
    /// this test alone): spawns a tied `sleep`, writes its pid to `$TIED_PID_FILE`, and waits
    /// to be killed. Does nothing in an ordinary test run.
    #[test]
    // The sleep is never waited for on purpose: the owner is SIGKILLed with it running.
    #[allow(clippy::zombie_processes)]
    fn tied_owner_probe() {
        let Some(pid_file) = std::env::var_os("TIED_PID_FILE") else { return };
        let mut c = Command::new("sleep");
        c.arg("60");
        let child = spawn(c).expect("sleep starts");
        std::fs::write(pid_file, child.id().to_string()).unwrap();
        std::thread::sleep(Duration::from_secs(60));
    }

    /// A child tied by a process that is then SIGKILLed dies with it (before, an anvil whose
    /// owner was killed ran on after `make test` exited).
    #[test]
    fn a_tied_child_dies_when_its_owner_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut owner = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tied::tests::tied_owner_probe", "--test-threads", "1"])
            .env("TIED_PID_FILE", &pid_file)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        let sleeper: i32 = loop {
            if let Ok(s) = std::fs::read_to_string(&pid_file) {
                if let Ok(p) = s.trim().parse() {
                    break p;
                }
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "the owner never spawned");
            std::thread::sleep(Duration::from_millis(20));
        };
        owner.kill().unwrap(); // SIGKILL: the owner runs no drop and no handler
        owner.wait().unwrap();
        let t0 = Instant::now();
        // Killed, the sleeper is reparented and reaped by init (or a subreaper); until then it
        // shows as a zombie, which counts as gone.
        loop {
            let gone = match std::fs::read_to_string(format!("/proc/{sleeper}/stat")) {
                Err(_) => true,
                Ok(s) => s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')),
            };
            if gone {
                break;
            }
            if t0.elapsed() > Duration::from_secs(30) {
                // SAFETY: cleaning up the process this test failed to see killed.
                unsafe { libc::kill(sleeper, libc::SIGKILL) };
                panic!("the tied child outlived its killed owner");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
