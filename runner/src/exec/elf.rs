//! ELF checks before running a target, and symbolisation of crash addresses (goblin).
//!
//! LD_PRELOAD only works on dynamically linked executables of the loader's architecture, so a
//! target that is not an x86-64 dynamic ELF would silently run uncontrolled: refuse it with
//! the reason instead.

use goblin::elf::{header, program_header, Elf};
use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// Why a path cannot be run under poscheck.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ElfError {
    #[error("{0}: no such file")]
    Missing(String),
    #[error("{0}: is a directory")]
    Directory(String),
    #[error("{0}: not executable (no execute permission)")]
    NotExecutable(String),
    #[error("{0}: is a script (#!), not an ELF binary; run poscheck on the interpreter's target instead")]
    Script(String),
    #[error("{0}: not an ELF file")]
    NotElf(String),
    #[error("{0}: 32-bit ELF; only x86-64 is supported")]
    Bits32(String),
    #[error("{0}: ELF for another machine (e_machine {1}); only x86-64 is supported")]
    Machine(String, u16),
    #[error("{0}: statically linked; LD_PRELOAD cannot interpose (use --backend ptrace or auto, or relink dynamically)")]
    Static(String),
    #[error("{0}: cannot read: {1}")]
    Io(String, String),
}

/// What the check learned about a runnable target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    /// Creates threads: imports a thread-creating function (pthread, C11, `std::thread`,
    /// OpenMP; see [`makes_threads`]) or links a library of its own that does
    /// ([`creates_threads`]). Else nothing is scheduled.
    pub makes_threads: bool,
    /// Compiled with `-fsanitize=thread` (imports `__tsan_init` or `__tsan_func_entry`, as
    /// every instrumented unit does): its memory accesses can be scheduling points.
    pub instrumented: bool,
    /// Statically linked (no program interpreter): LD_PRELOAD cannot reach it, only the
    /// ptrace backend can control it.
    pub is_static: bool,
    /// Links Rust's standard library (a symbol of its table names `rust_begin_unwind` or
    /// `__rust_alloc`, mangled or not; unknown, false, for a stripped binary).
    pub rust_std: bool,
    /// Imports `clone` itself (a raw task, not through `pthread_create`): such tasks run
    /// uncontrolled.
    pub raw_clone: bool,
    /// The sanitizers it is built with, as far as libpos must know (see [`Sanitizers`]).
    pub sanitizers: Sanitizers,
    /// The shared libraries it links besides the C and C++ runtimes, libgomp, the
    /// sanitizers and libpos (libtbb, libglib, libuv, ...): their own code is never
    /// instrumented, so how their threads share memory is not seen.
    pub other_libraries: Vec<String>,
}

/// What a sanitizer build needs from the run's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sanitizers {
    /// The sanitizer runtimes it links as shared libraries (gcc's `-fsanitize=address` or
    /// `thread`: `libasan.so.8`, `libtsan.so.2`, ...): they go before libpos in its
    /// `LD_PRELOAD`. Each insists on coming first in the process's library list
    /// (AddressSanitizer stops the program otherwise: "ASan runtime does not come first in
    /// initial library list"), and ThreadSanitizer's, loaded after libpos, crashed or hung
    /// every run of a correct program.
    pub preload: Vec<String>,
    /// LeakSanitizer runs at its exit (AddressSanitizer's or LeakSanitizer's runtime, shared
    /// or linked in, as clang links it): libpos's own blocks must be hidden from it
    /// ([`pos_sched::protocol::ENV_LSAN`]).
    pub lsan: bool,
    /// A runtime with a leak checker linked into the executable (clang's ASan or LSan): the
    /// span of its code, as offsets from the executable's first mapping
    /// ([`pos_sched::protocol::ENV_UNTRAPPED`]).
    pub linked_in: Option<(u64, u64)>,
}

/// Check that `path` is an x86-64 executable ELF (statically linked or not: see
/// [`ElfInfo::is_static`]; the preload backend refuses static ones).
pub fn check(path: &Path) -> Result<ElfInfo, ElfError> {
    let name = path.display().to_string();
    let meta = fs::metadata(path).map_err(|_| ElfError::Missing(name.clone()))?;
    if meta.is_dir() {
        return Err(ElfError::Directory(name));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(ElfError::NotExecutable(name));
    }
    let bytes = fs::read(path).map_err(|e| ElfError::Io(name.clone(), e.to_string()))?;
    if bytes.starts_with(b"#!") {
        return Err(ElfError::Script(name));
    }
    if !bytes.starts_with(b"\x7fELF") {
        return Err(ElfError::NotElf(name));
    }
    if bytes.get(header::EI_CLASS) == Some(&header::ELFCLASS32) {
        return Err(ElfError::Bits32(name));
    }
    let elf = Elf::parse(&bytes).map_err(|_| ElfError::NotElf(name.clone()))?;
    if !elf.is_64 {
        return Err(ElfError::Bits32(name));
    }
    if elf.header.e_machine != header::EM_X86_64 {
        return Err(ElfError::Machine(name, elf.header.e_machine));
    }
    let has_interp = elf
        .program_headers
        .iter()
        .any(|p| p.p_type == program_header::PT_INTERP);
    if !has_interp || elf.dynamic.is_none() {
        // Statically linked: what it links in is in its own symbol table (a stripped one
        // has none: it may make threads).
        let makes_threads = elf.syms.is_empty()
            || elf.syms.iter().any(|s| {
                s.is_function()
                    && s.st_value != 0
                    && elf.strtab.get_at(s.st_name).is_some_and(makes_threads)
            });
        return Ok(ElfInfo {
            makes_threads,
            instrumented: false,
            is_static: true,
            rust_std: links_rust_std(&elf, &bytes),
            raw_clone: false,
            sanitizers: Sanitizers::default(),
            other_libraries: Vec::new(),
        });
    }
    let makes_threads = creates_threads(path, &elf);
    let preload = runtimes_of(&elf);
    // With ThreadSanitizer's own runtime loaded, the memory-access callbacks are its own:
    // libpos never sees them, as in a plain build.
    let own_tsan = preload.iter().any(|l| l.starts_with("libtsan.so"));
    let lsan = preload
        .iter()
        .any(|l| l.starts_with("libasan.so") || l.starts_with("liblsan.so"))
        || defines_any(&elf, &["__lsan_disable"]);
    // Only a runtime with a leak checker needs its futexes left alone (see
    // `preload/src/trap.rs`); ThreadSanitizer's are better modelled.
    let leak_checker = defines_any(&elf, &["__asan_init", "__lsan_init", "__hwasan_init"]);
    let sanitizers = Sanitizers {
        preload,
        lsan,
        linked_in: leak_checker.then(|| linked_in_runtime(&elf)).flatten(),
    };
    Ok(ElfInfo {
        makes_threads,
        instrumented: !own_tsan && imports_any(&elf, &["__tsan_init", "__tsan_func_entry"]),
        is_static: false,
        rust_std: links_rust_std(&elf, &bytes),
        raw_clone: imports_any(&elf, &["clone", "clone3"]),
        sanitizers,
        other_libraries: other_libraries(&elf),
    })
}

/// The `DT_NEEDED` libraries of `elf` that are not a language or system runtime (whose
/// synchronisation libpos interposes or traps), a sanitizer runtime, libatomic or libpos
/// ([`ElfInfo::other_libraries`]).
fn other_libraries(elf: &Elf) -> Vec<String> {
    // Besides the language and system runtimes ([`is_runtime`]) and the sanitizers.
    const OWN: &[&str] = &["libatomic.so", "libubsan.so", "libpos.so"];
    elf.libraries
        .iter()
        .filter(|l| {
            !is_runtime(l)
                && !OWN
                    .iter()
                    .chain(SANITIZER_RUNTIMES)
                    .any(|k| l.starts_with(k))
        })
        .map(|l| l.to_string())
        .collect()
}

/// The span of the code of a sanitizer runtime linked into the executable (clang links its
/// runtimes so), from its symbol table: the lowest and the highest end of the functions
/// whose names are the runtimes' (`__sanitizer`, `__asan`, `__lsan`, `__tsan`, ... and
/// their C++ namespaces), as offsets from the start of its first mapping (its lowest
/// loadable segment, page-aligned). `None` without such functions or a symbol table.
fn linked_in_runtime(elf: &Elf) -> Option<(u64, u64)> {
    const NAMES: &[&str] = &[
        "sanitizer",
        "asan",
        "lsan",
        "tsan",
        "msan",
        "ubsan",
        "hwasan",
        "interception",
        "interceptor",
        "sancov",
    ];
    let runtime = |name: &str| {
        let plain = name.trim_start_matches('_');
        // `_ZN11__sanitizer...`: a C++ name in the runtime's namespace.
        let nested = name
            .strip_prefix("_ZN")
            .map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit()))
            .map(|r| r.trim_start_matches('_'));
        NAMES
            .iter()
            .any(|n| plain.starts_with(n) || nested.is_some_and(|r| r.starts_with(n)))
    };
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for s in elf.syms.iter() {
        if s.is_function() && s.st_value != 0 && elf.strtab.get_at(s.st_name).is_some_and(runtime) {
            lo = lo.min(s.st_value);
            hi = hi.max(s.st_value + s.st_size.max(1));
        }
    }
    if lo >= hi {
        return None;
    }
    let base = elf
        .program_headers
        .iter()
        .filter(|p| p.p_type == program_header::PT_LOAD)
        .map(|p| p.p_vaddr & !0xfff)
        .min()?;
    Some((lo.checked_sub(base)?, hi.checked_sub(base)?))
}

/// The shared sanitizer runtimes that must lead `LD_PRELOAD` ([`Sanitizers::preload`]).
const SANITIZER_RUNTIMES: &[&str] = &["libasan.so", "libtsan.so", "liblsan.so", "libhwasan.so"];

/// The shared sanitizer runtimes a program links (its `DT_NEEDED` entries).
fn runtimes_of(elf: &Elf) -> Vec<String> {
    elf.libraries
        .iter()
        .filter(|l| SANITIZER_RUNTIMES.iter().any(|r| l.starts_with(r)))
        .map(|l| l.to_string())
        .collect()
}

/// The sanitizers `program` is built with ([`ElfInfo::sanitizers`]), read once per program
/// and process (every run's environment needs them). Nothing when the file cannot be read as
/// an ELF (the run then says why).
pub fn sanitizers(program: &Path) -> Sanitizers {
    static SEEN: OnceLock<Mutex<HashMap<std::path::PathBuf, Sanitizers>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    seen.entry(program.to_path_buf())
        .or_insert_with(|| check(program).map(|i| i.sanitizers).unwrap_or_default())
        .clone()
}

/// Whether `elf` exports (defines) one of the symbols `names`.
fn defines_any(elf: &Elf, names: &[&str]) -> bool {
    elf.dynsyms.iter().any(|s| {
        !s.is_import()
            && s.st_value != 0
            && elf
                .dynstrtab
                .get_at(s.st_name)
                .is_some_and(|n| names.contains(&n))
    })
}

/// Whether `elf` itself imports one of the symbols `names`.
fn imports_any(elf: &Elf, names: &[&str]) -> bool {
    elf.dynsyms.iter().any(|s| {
        s.is_import()
            && elf
                .dynstrtab
                .get_at(s.st_name)
                .is_some_and(|n| names.contains(&n))
    })
}

/// Whether the program has Rust's standard library: its symbol table shows it, or, stripped
/// (as distributions ship ripgrep and fd), its read-only data holds the standard library's
/// source paths (`library/std/src/`, from panic locations). Probe 21: an exploration of
/// stripped ripgrep said `complete` after one execution, without the Rust caveat.
fn links_rust_std(elf: &Elf, bytes: &[u8]) -> bool {
    if !elf.syms.is_empty() {
        return elf.syms.iter().any(|s| {
            elf.strtab
                .get_at(s.st_name)
                .is_some_and(|n| n.contains("rust_begin_unwind") || n.contains("__rust_alloc"))
        });
    }
    const STD_SOURCE: &[u8] = b"library/std/src/";
    elf.section_headers
        .iter()
        .filter(|h| elf.shdr_strtab.get_at(h.sh_name) == Some(".rodata"))
        .filter_map(|h| bytes.get(h.sh_offset as usize..(h.sh_offset + h.sh_size) as usize))
        .any(|data| data.windows(STD_SOURCE.len()).any(|w| w == STD_SOURCE))
}

/// Whether importing the symbol `name` means threads are created: `pthread_create`, C11
/// `thrd_create`, libstdc++'s `std::thread` (its members start the thread inside libstdc++,
/// so a C++ program may import no pthread function at all; `std::jthread` and `std::async`
/// use them too), or an OpenMP parallel region (libgomp's `GOMP_parallel*`/`GOMP_teams*`,
/// LLVM libomp's `__kmpc_fork_*`), a timer (`timer_create`, `timerfd_create`, `alarm`,
/// `setitimer`: libpos runs an armed timer on a thread of the run), or `fork` (the child
/// process's thread is scheduled with the parent's: process-shared objects, cross-process
/// deadlocks). Synchronisation functions alone (a mutex, `pthread_self`, which Rust's std
/// imports in every program) make no thread.
fn makes_threads(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "pthread_create",
        "thrd_create",
        "_ZNSt6thread",
        "GOMP_parallel",
        "GOMP_teams",
        "__kmpc_fork_",
        // Under libpos an armed timer is a thread of the run (`preload/src/timer.rs`).
        "timer_create",
        "timerfd_create",
        "alarm",
        "setitimer",
        // A forked child is a thread of the run (`preload/src/fork.rs`); `forkpty` too.
        "fork",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether `elf` itself imports a thread-creating function ([`makes_threads`]).
fn imports_thread_creation(elf: &Elf<'_>) -> bool {
    elf.dynsyms
        .iter()
        .any(|s| s.is_import() && elf.dynstrtab.get_at(s.st_name).is_some_and(makes_threads))
}

/// Language and system runtimes: they import `pthread_create` for the programs that call
/// their thread-creating entry points, so what counts is whether the program imports those
/// entries ([`makes_threads`]), not what the runtime imports.
fn is_runtime(soname: &str) -> bool {
    const RUNTIMES: &[&str] = &[
        "libc.so",
        "libpthread.so",
        "libstdc++.so",
        "libc++.so",
        "libc++abi.so",
        "libgomp.so",
        "libomp.so",
        "libgcc_s.so",
        "libm.so",
        "libdl.so",
        "librt.so",
        "ld-linux",
    ];
    RUNTIMES.iter().any(|r| soname.starts_with(r))
}

/// Directories the dynamic loader searches after `LD_LIBRARY_PATH` and the run paths: the
/// usual multiarch and legacy places plus the lines of `/etc/ld.so.conf.d/*.conf` (a
/// stand-in for the loader's cache, enough to find a library the program links).
fn system_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    if let Ok(rd) = fs::read_dir("/etc/ld.so.conf.d") {
        let mut confs: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        confs.sort();
        for c in confs {
            for l in fs::read_to_string(c).unwrap_or_default().lines() {
                let l = l.trim();
                if l.starts_with('/') {
                    dirs.push(l.to_string());
                }
            }
        }
    }
    for d in [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
    ] {
        dirs.push(d.to_string());
    }
    dirs
}

/// Where the loader would find the library `needed` of the object at `from` (its
/// RPATH/RUNPATH with `$ORIGIN`, `LD_LIBRARY_PATH`, the system directories), if anywhere.
fn resolve(needed: &str, from: &Path, elf: &Elf<'_>) -> Option<std::path::PathBuf> {
    if needed.contains('/') {
        return Some(std::path::PathBuf::from(needed));
    }
    let origin = from
        .parent()
        .map_or_else(|| ".".to_string(), |p| p.display().to_string());
    let mut dirs: Vec<String> = Vec::new();
    for list in elf.rpaths.iter().chain(elf.runpaths.iter()) {
        for d in list.split(':') {
            dirs.push(d.replace("$ORIGIN", &origin).replace("${ORIGIN}", &origin));
        }
    }
    if let Ok(l) = std::env::var("LD_LIBRARY_PATH") {
        dirs.extend(l.split(':').filter(|d| !d.is_empty()).map(str::to_string));
    }
    dirs.extend(system_dirs());
    dirs.iter()
        .map(|d| Path::new(d).join(needed))
        .find(|p| p.is_file())
}

/// Whether the program `elf` (at `path`) creates threads: it imports a thread-creating
/// function, or one of its own libraries does, transitively (not counting the runtimes,
/// see [`is_runtime`]). A library that cannot be found or parsed counts as not creating
/// threads (at worst, a warning too many).
fn creates_threads(path: &Path, elf: &Elf<'_>) -> bool {
    if imports_thread_creation(elf) {
        return true;
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut todo: Vec<std::path::PathBuf> = elf
        .libraries
        .iter()
        .filter(|l| !is_runtime(l))
        .filter_map(|l| resolve(l, path, elf))
        .collect();
    while let Some(lib) = todo.pop() {
        if seen.len() > 256 || !seen.insert(lib.clone()) {
            continue;
        }
        let Ok(bytes) = fs::read(&lib) else { continue };
        let Ok(l) = Elf::parse(&bytes) else { continue };
        if imports_thread_creation(&l) {
            return true;
        }
        todo.extend(
            l.libraries
                .iter()
                .filter(|n| !is_runtime(n))
                .filter_map(|n| resolve(n, &lib, &l)),
        );
    }
    false
}

/// One line of `/proc/<pid>/maps` for a file-backed mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub path: String,
}

/// Parse the file-backed mappings of `/proc/<pid>/maps` text. A mapping whose file is gone
/// (`(deleted)`: shared anonymous memory shows as `/dev/zero (deleted)`, a memfd or System V
/// segment likewise) has no file to read symbols from: left out.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let range = it.next()?;
            let _perms = it.next()?;
            let offset = u64::from_str_radix(it.next()?, 16).ok()?;
            let _dev = it.next()?;
            let _inode = it.next()?;
            let path = it.next()?;
            if !path.starts_with('/') || it.next() == Some("(deleted)") {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                offset,
                path: path.to_string(),
            })
        })
        .collect()
}

/// The bytes of a mapped file, when it is a regular file: a mapping of a device (`/dev/zero`,
/// a GPU's) would read for ever or block, and none of them holds symbols.
pub fn mapped_file(path: &str) -> Option<Vec<u8>> {
    regular_file(path).then(|| fs::read(path).ok()).flatten()
}

/// Whether `path` names a regular file (see [`mapped_file`]).
pub fn regular_file(path: &str) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The mapped file holding the absolute `pc` and the address of `pc` in that file's own
/// terms (its link-time virtual address: what `addr2line -e FILE` takes).
pub fn locate(pc: u64, maps: &[Mapping]) -> Option<(String, u64)> {
    let m = maps.iter().find(|m| m.start <= pc && pc < m.end)?;
    let bytes = mapped_file(&m.path)?;
    let elf = Elf::parse(&bytes).ok()?;
    let bias = load_bias(m, maps, elf.header.e_type == header::ET_DYN)?;
    Some((m.path.clone(), pc.checked_sub(bias)?))
}

/// Where mapping `m`'s file is placed: for a position-independent file (`pie`) the address
/// its offset 0 is mapped at, else 0 (its link-time addresses are the run's).
pub fn load_bias(m: &Mapping, maps: &[Mapping], pie: bool) -> Option<u64> {
    if !pie {
        return Some(0);
    }
    maps.iter()
        .filter(|x| x.path == m.path && x.offset == 0)
        .map(|x| x.start)
        .min()
}

/// `function+0xoff (file)` for an absolute `pc`, using the process's mappings (ASLR is off,
/// so addresses are those of the run) and the file's symbol tables.
pub fn symbolise(pc: u64, maps: &[Mapping]) -> Option<String> {
    let m = maps.iter().find(|m| m.start <= pc && pc < m.end)?;
    let file = Path::new(&m.path);
    let short = file.file_name()?.to_string_lossy().into_owned();
    let bytes = mapped_file(&m.path)?;
    let elf = Elf::parse(&bytes).ok()?;
    let bias = load_bias(m, maps, elf.header.e_type == header::ET_DYN)?;
    let vaddr = pc.checked_sub(bias)?;
    let found = elf
        .syms
        .iter()
        .map(|s| (s, &elf.strtab))
        .chain(elf.dynsyms.iter().map(|s| (s, &elf.dynstrtab)))
        .filter(|(s, _)| {
            s.is_function() && s.st_value <= vaddr && vaddr < s.st_value + s.st_size.max(1)
        })
        .find_map(|(s, tab)| {
            tab.get_at(s.st_name)
                .map(|n| (n.to_string(), vaddr - s.st_value))
        });
    Some(match found {
        Some((name, off)) => format!("{name}+{off:#x} in {short}"),
        None => format!("{vaddr:#x} in {short}"),
    })
}

/// The run-time addresses of the functions named `names` defined in `program` (a statically
/// linked program, or a shared library: its symbol tables), deduplicated (aliases share an
/// address). A position-independent file is placed by its mapping in `maps`.
pub fn function_addresses(program: &Path, names: &[&str], maps: &[Mapping]) -> Vec<u64> {
    let Ok(bytes) = fs::read(program) else {
        return Vec::new();
    };
    let Ok(elf) = Elf::parse(&bytes) else {
        return Vec::new();
    };
    let path = program.display().to_string();
    let bias = if elf.header.e_type == header::ET_DYN {
        let canon = fs::canonicalize(program).map(|p| p.display().to_string());
        match maps
            .iter()
            .filter(|m| {
                m.offset == 0 && (m.path == path || canon.as_ref().is_ok_and(|c| *c == m.path))
            })
            .map(|m| m.start)
            .min()
        {
            Some(b) => b,
            None => return Vec::new(),
        }
    } else {
        0
    };
    let mut out: Vec<u64> = elf
        .syms
        .iter()
        .map(|s| (s, &elf.strtab))
        .chain(elf.dynsyms.iter().map(|s| (s, &elf.dynstrtab)))
        .filter(|(s, _)| s.is_function() && s.st_value != 0 && s.st_shndx != 0)
        .filter(|(s, tab)| tab.get_at(s.st_name).is_some_and(|n| names.contains(&n)))
        .map(|(s, _)| s.st_value + bias)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether an ELF file is position-independent (`ET_DYN`: its addresses move by its load
/// bias), and its object symbols: (link-time address, size, name).
type ObjectSymbols = (bool, Vec<(u64, u64, String)>);

/// The [`ObjectSymbols`] of the ELF file at `path`. Read once per file and process: a run's
/// deadlock report names its objects, and a session may see hundreds of deadlocks.
fn object_symbols(path: &str) -> Option<Arc<ObjectSymbols>> {
    type Cache = Mutex<HashMap<String, Option<Arc<ObjectSymbols>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(path).cloned()) {
        return hit;
    }
    let read = || {
        let bytes = mapped_file(path)?;
        let elf = Elf::parse(&bytes).ok()?;
        let syms = elf
            .syms
            .iter()
            .map(|s| (s, &elf.strtab))
            .chain(elf.dynsyms.iter().map(|s| (s, &elf.dynstrtab)))
            .filter(|(s, _)| s.st_type() == goblin::elf::sym::STT_OBJECT)
            .filter_map(|(s, tab)| {
                let name = tab.get_at(s.st_name)?;
                Some((s.st_value, s.st_size.max(1), name.to_string()))
            })
            .collect();
        Some(Arc::new((elf.header.e_type == header::ET_DYN, syms)))
    };
    let got = read();
    if let Ok(mut c) = cache.lock() {
        c.insert(path.to_string(), got.clone());
    }
    got
}

/// The data symbol (`name` or `name+0xoff`) that holds the absolute address `addr` in one of
/// the mapped files (a program's globals: a deadlock's mutexes and futex words).
pub fn data_symbol(addr: u64, maps: &[Mapping]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for m in maps {
        if seen.contains(&m.path.as_str()) {
            continue;
        }
        seen.push(&m.path);
        let Some(file) = object_symbols(&m.path) else {
            continue;
        };
        let (pie, syms) = &*file;
        let bias = if *pie {
            match maps
                .iter()
                .filter(|x| x.path == m.path && x.offset == 0)
                .map(|x| x.start)
                .min()
            {
                Some(b) => b,
                None => continue,
            }
        } else {
            0
        };
        let Some(vaddr) = addr.checked_sub(bias) else {
            continue;
        };
        let found = syms
            .iter()
            .find(|(start, size, _)| *start <= vaddr && vaddr < start + size);
        if let Some((start, _, name)) = found {
            let off = vaddr - start;
            return Some(if off == 0 {
                name.clone()
            } else {
                format!("{name}+{off:#x}")
            });
        }
    }
    None
}

/// `text` with each hexadecimal address in it followed by the data symbol that holds it
/// (` <name>`), or by what `other` says of an address no symbol holds: a deadlock report's
/// objects by name (`mutex 0x555555558040 <lock_a>`).
pub fn name_addresses(
    text: &str,
    maps: &[Mapping],
    other: impl Fn(u64) -> Option<String>,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let hex: String = rest[i + 2..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        out.push_str(&rest[i..i + 2 + hex.len()]);
        if let Ok(a) = u64::from_str_radix(&hex, 16) {
            if let Some(name) = data_symbol(a, maps).or_else(|| other(a)) {
                out.push_str(&format!(" <{name}>"));
            }
        }
        rest = &rest[i + 2 + hex.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_missing_and_non_elf_files_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(matches!(check(&missing), Err(ElfError::Missing(_))));
        let script = dir.path().join("s.sh");
        fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(check(&script), Err(ElfError::Script(_))));
        let text = dir.path().join("t");
        fs::write(&text, "hello").unwrap();
        assert!(matches!(check(&text), Err(ElfError::NotExecutable(_))));
        fs::set_permissions(&text, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(check(&text), Err(ElfError::NotElf(_))));
        assert!(matches!(check(dir.path()), Err(ElfError::Directory(_))));
    }

    #[test]
    fn only_thread_creation_counts_as_threads() {
        for n in [
            "pthread_create",
            "thrd_create",
            "GOMP_parallel",
            "GOMP_parallel_loop_dynamic",
            "GOMP_teams_reg",
            "__kmpc_fork_call",
            "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
        ] {
            assert!(makes_threads(n), "{n}");
        }
        for n in [
            "printf",
            "malloc",
            "_ZNSt8ios_base4InitC1Ev",
            "sched_yield",
            "syscall",
            // Synchronisation without thread creation (Rust's std imports these in every
            // program, threads or not).
            "pthread_self",
            "pthread_key_create",
            "pthread_mutex_lock",
            "sem_wait",
            "mtx_lock",
            "omp_get_thread_num",
        ] {
            assert!(!makes_threads(n), "{n}");
        }
    }

    #[test]
    fn parses_maps_lines() {
        let maps = parse_maps(
            "555555554000-555555555000 r--p 00000000 08:01 123 /usr/bin/x\n\
             7ffff7fc3000-7ffff7fc7000 r--p 00000000 00:00 0 [vvar]\n\
             7ffff7de6000-7ffff7de7000 rw-s 00000000 00:01 2052 /dev/zero (deleted)\n\
             7ffff7de5000-7ffff7de6000 rw-s 00000000 00:01 2053 /memfd:ring (deleted)\n",
        );
        assert_eq!(maps.len(), 1);
        assert_eq!(maps[0].start, 0x555555554000);
        assert_eq!(maps[0].path, "/usr/bin/x");
    }

    /// A run's report once read `/dev/zero` (a `MAP_SHARED | MAP_ANONYMOUS` mapping) to find
    /// a semaphore's symbol, until the runner ran out of memory: devices are never read.
    #[test]
    fn only_regular_files_are_read_for_symbols() {
        assert!(mapped_file("/dev/zero").is_none());
        assert!(mapped_file("/proc/self").is_none());
        assert!(mapped_file("/proc/self/exe").is_some_and(|b| b.starts_with(b"\x7fELF")));
        let maps = vec![Mapping {
            start: 0x7fff_f7de_6000,
            end: 0x7fff_f7de_7000,
            offset: 0,
            path: "/dev/zero".into(),
        }];
        assert_eq!(data_symbol(0x7fff_f7de_6000, &maps), None);
        assert_eq!(symbolise(0x7fff_f7de_6000, &maps), None);
        assert_eq!(locate(0x7fff_f7de_6000, &maps), None);
    }
}
