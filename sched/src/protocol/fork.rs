//! The fork-server protocol between the runner and libpos (`POSCHECK_SERVER`).
//!
//! The runner starts a program once; libpos's constructor connects to the runner's control
//! socket (first frame [`Notice::Server`]) and keeps one child forked ahead of its run: the
//! *spare*, which connects to the same socket (first frame [`Notice::Spare`]) and waits.
//! To start a run the runner sends the spare a [`request`] (the run's socket path, with the
//! run's stdout and stderr pipes attached as `SCM_RIGHTS`); the spare's connection then
//! becomes the run's main-thread connection. The server forks the next spare and reports
//! each run's end on the control connection ([`Notice::Exited`], [`Notice::Killed`]); the
//! runner answers [`Notice::Reap`] once it has killed the run's process group. A runner
//! that hears the run's own end report first says so ([`Notice::Ahead`]), and the next spare
//! is forked while the child exits. Frames have a fixed size.

/// Environment variable carrying the control socket path: libpos becomes a fork server.
/// As long as [`super::ENV_SOCKET`], and the runner names both sockets alike, so a forked
/// run's initial stack (environment strings included) is laid out as a spawned run's.
pub const ENV_FORK_SERVER: &str = "POSCHECK_SERVER";

pub const REQUEST_LEN: usize = 128;
pub const NOTICE_LEN: usize = 16;

/// A run for a spare: its threads connect to the given socket path, and it writes to the two
/// pipes sent along.
pub mod request {
    use super::REQUEST_LEN;

    /// Longest socket path (a `sockaddr_un` holds 108 bytes with the NUL).
    pub const MAX_PATH: usize = 107;

    pub fn encode(socket: &[u8]) -> Result<[u8; REQUEST_LEN], String> {
        let n = socket.len();
        if n == 0 || n > MAX_PATH {
            return Err(format!(
                "socket path of {n} bytes (1 to {MAX_PATH} allowed)"
            ));
        }
        let mut b = [0u8; REQUEST_LEN];
        b[0..4].copy_from_slice(&(n as u32).to_le_bytes());
        b[4..4 + n].copy_from_slice(socket);
        Ok(b)
    }

    /// The socket path, borrowed from the frame: the server decodes without allocating, so
    /// a forked child's heap is laid out as a spawned program's.
    pub fn decode(b: &[u8; REQUEST_LEN]) -> Result<&[u8], String> {
        let n = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")) as usize;
        if n == 0 || n > MAX_PATH {
            return Err(format!("bad fork request (path length {n})"));
        }
        Ok(&b[4..4 + n])
    }
}

/// What the server tells the runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Server → runner, first frame of the control connection.
    Server { pid: u32 },
    /// Spare → runner, first frame of a spare's connection: it waits for a run, in its own
    /// process group (pgid = pid).
    Spare { pid: u32 },
    /// Server → runner: a run's child exited with this code (it stays unreaped until the
    /// runner's [`Notice::Reap`], so its pid, the group id, cannot be reused before).
    Exited { pid: u32, code: i32 },
    /// Server → runner: a run's child was killed by this signal (unreaped likewise).
    Killed { pid: u32, signal: i32 },
    /// Runner → server: the run is over and its group killed; reap the child.
    Reap { pid: u32 },
    /// Runner → server: run `pid` sent its end report (the program is exiting): fork the
    /// next spare now, beside the child's exit, rather than after it.
    Ahead { pid: u32 },
}

impl Notice {
    pub fn encode(&self) -> [u8; NOTICE_LEN] {
        let (kind, pid, value) = match *self {
            Notice::Server { pid } => (1u32, pid, 0),
            Notice::Spare { pid } => (2, pid, 0),
            Notice::Exited { pid, code } => (3, pid, code),
            Notice::Killed { pid, signal } => (4, pid, signal),
            Notice::Reap { pid } => (5, pid, 0),
            Notice::Ahead { pid } => (6, pid, 0),
        };
        let mut b = [0u8; NOTICE_LEN];
        b[0..4].copy_from_slice(&kind.to_le_bytes());
        b[4..8].copy_from_slice(&pid.to_le_bytes());
        b[8..12].copy_from_slice(&value.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8; NOTICE_LEN]) -> Result<Notice, String> {
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let (pid, value) = (word(4), word(8) as i32);
        Ok(match word(0) {
            1 => Notice::Server { pid },
            2 => Notice::Spare { pid },
            3 => Notice::Exited { pid, code: value },
            4 => Notice::Killed { pid, signal: value },
            5 => Notice::Reap { pid },
            6 => Notice::Ahead { pid },
            k => return Err(format!("bad fork-server notice (kind {k})")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_socket_variables_have_the_same_length() {
        assert_eq!(ENV_FORK_SERVER.len(), super::super::ENV_SOCKET.len());
        assert_eq!(
            super::super::ENV_RUN_MARK.len(),
            super::super::ENV_SOCKET.len()
        );
    }

    #[test]
    fn requests_round_trip_and_bad_lengths_are_refused() {
        let path = b"/dev/shm/poscheck-x/sock";
        assert_eq!(
            request::decode(&request::encode(path).unwrap()).unwrap(),
            path
        );
        assert!(request::encode(b"").is_err());
        assert!(request::encode(&[b'a'; request::MAX_PATH + 1]).is_err());
        let mut b = [0u8; REQUEST_LEN];
        b[0] = 200;
        assert!(request::decode(&b).is_err());
    }

    #[test]
    fn notices_round_trip_and_unknown_kinds_are_refused() {
        for n in [
            Notice::Server { pid: 42 },
            Notice::Spare { pid: 43 },
            Notice::Exited { pid: 7, code: -1 },
            Notice::Killed { pid: 9, signal: 11 },
            Notice::Reap { pid: 7 },
            Notice::Ahead { pid: 8 },
        ] {
            assert_eq!(Notice::decode(&n.encode()).unwrap(), n);
        }
        assert!(Notice::decode(&[9u8; NOTICE_LEN]).is_err());
    }
}
