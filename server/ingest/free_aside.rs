//! Frees values on a thread of its own. A replaced publication often holds the last reference
//! to every re-evaluated cluster's previous verdicts: after a flood, hundreds of thousands of
//! small frees that the runner's next round need not wait for. At most one value waits while
//! another is being freed; past that, the caller frees it itself, so memory waiting to be freed
//! stays bounded however far the freeing thread falls behind.

use std::sync::mpsc::{self, SyncSender, TrySendError};

pub struct FreeAside<T> {
    /// None when no thread could be started: values are freed where they are handed over.
    waiting: Option<SyncSender<T>>,
}

impl<T: Send + 'static> FreeAside<T> {
    /// Starts the freeing thread; it ends once this is dropped and what it holds is freed.
    pub fn start() -> Self {
        let (waiting, freed) = mpsc::sync_channel::<T>(1);
        let started = std::thread::Builder::new()
            .name("fleetglass-free".into())
            .spawn(move || freed.into_iter().for_each(drop));
        FreeAside {
            waiting: started.is_ok().then_some(waiting),
        }
    }

    /// Frees `value` on the freeing thread, or here when another value already waits there
    /// (or the thread is gone).
    pub fn free(&self, value: T) {
        if let Some(waiting) = &self.waiting {
            match waiting.try_send(value) {
                Ok(()) => {}
                Err(TrySendError::Full(value) | TrySendError::Disconnected(value)) => drop(value),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FreeAside;
    use std::sync::mpsc;
    use std::thread::ThreadId;

    /// Says on which thread it is dropped; with `hold`, first says it started and waits to be
    /// let go.
    struct Tells {
        dropped_on: mpsc::Sender<ThreadId>,
        hold: Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>,
    }

    impl Drop for Tells {
        fn drop(&mut self) {
            if let Some((started, let_go)) = self.hold.take() {
                let _ = started.send(());
                let _ = let_go.recv();
            }
            let _ = self.dropped_on.send(std::thread::current().id());
        }
    }

    #[test]
    fn a_value_is_freed_off_the_callers_thread() {
        let aside = FreeAside::start();
        let (dropped_on, dropped) = mpsc::channel();
        aside.free(Tells {
            dropped_on,
            hold: None,
        });
        let on = dropped.recv().expect("the value is dropped, not leaked");
        assert_ne!(on, std::thread::current().id());
    }

    #[test]
    fn while_one_is_being_freed_and_one_waits_the_caller_frees_the_next_itself() {
        let aside = FreeAside::start();
        let (dropped_on, dropped) = mpsc::channel();
        let (started, freeing) = mpsc::channel();
        let (let_go, held) = mpsc::channel();
        aside.free(Tells {
            dropped_on: dropped_on.clone(),
            hold: Some((started, held)),
        });
        freeing.recv().expect("the first value is being freed");
        let plain = || Tells {
            dropped_on: dropped_on.clone(),
            hold: None,
        };
        aside.free(plain());
        aside.free(plain());
        let here = std::thread::current().id();
        assert_eq!(
            dropped.recv().ok(),
            Some(here),
            "the third is freed at once, here"
        );
        let_go.send(()).expect("the first is still held");
        let rest = [dropped.recv().ok(), dropped.recv().ok()];
        assert!(
            rest.iter().all(|on| on.is_some_and(|on| on != here)),
            "the first and the waiting one are freed on the freeing thread: {rest:?}"
        );
    }
}
