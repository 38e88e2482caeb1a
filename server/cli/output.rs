//! A command's answer on stdout. A reader that stops early (`fleetglass impact | head`) closes
//! the pipe; that ends the command quietly and successfully, where `println!` would panic.

use std::io::Write;

/// Prints one line of the answer (use through [`say!`]).
pub fn line(text: std::fmt::Arguments<'_>) {
    let written = writeln!(std::io::stdout().lock(), "{text}");
    if let Err(error) = written {
        stopped_reading(&error);
        eprintln!("fleetglass: cannot write to stdout: {error}");
        std::process::exit(2);
    }
}

/// Ends the process with success when `error` says the reader closed the pipe: everything it
/// wanted, it has.
pub fn stopped_reading(error: &std::io::Error) {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
}

/// `println!` for a command's answer: see [`line`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::output::line(format_args!($($arg)*))
    };
}
pub(crate) use say;
