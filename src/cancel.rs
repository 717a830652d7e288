//! Cancellation: SIGINT and SIGTERM are counted, not obeyed at once. The first asks the running
//! check's process group to stop (SIGTERM, a short grace, SIGKILL) and the run to save its state;
//! a second one kills the group at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many stop signals arrived.
#[derive(Debug, Default)]
pub struct Cancel {
    signals: AtomicUsize,
}

impl Cancel {
    /// A stop was asked for.
    pub fn is_requested(&self) -> bool {
        self.signals.load(Ordering::Relaxed) >= 1
    }

    /// A stop was asked for twice: no more grace.
    pub fn is_urgent(&self) -> bool {
        self.signals.load(Ordering::Relaxed) >= 2
    }

    /// Records a stop request (what a signal does; tests call it directly).
    pub fn request(&self) {
        self.signals.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts SIGINT and SIGTERM from now on, on a thread of its own.
    pub fn listen_for_signals() -> std::io::Result<Arc<Self>> {
        let cancel = Arc::new(Self::default());
        let mut signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ])?;
        let counter = Arc::clone(&cancel);
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    // Counted first: logging may wait for a lock on stderr.
                    counter.request();
                    tracing::warn!(signal, "stop requested");
                }
            })?;
        Ok(cancel)
    }
}
