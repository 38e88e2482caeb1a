//! Which connections the server holds, and which one goes when there is no room. A connection
//! is *serving* while a request it carries is being answered; it is sheddable otherwise: idle
//! between requests, still sending a request head, or still sending a request body (a slow
//! body costs what a slow head does, so it goes the same way). At the cap (all clients
//! together, or one client's share) a newcomer pushes out the oldest sheddable connection in
//! the way; only when every one of them is serving is the newcomer closed at once.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Pushed-out connections are reported at most this often.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// Requests being answered on one connection; a connection with none may be pushed out.
pub struct Serving(Arc<AtomicUsize>);

impl Serving {
    pub fn start(count: &Arc<AtomicUsize>) -> Serving {
        count.fetch_add(1, Ordering::SeqCst);
        Serving(count.clone())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection's place among those held: given up when the connection ends.
pub struct Slot {
    pub serving: Arc<AtomicUsize>,
    /// Fires when a newcomer needs the room.
    pub pushed_out: oneshot::Receiver<()>,
    _registration: Registration,
}

struct Registration {
    id: u64,
    connections: Arc<Mutex<Connections>>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.connections
            .lock()
            .expect("not poisoned")
            .remove(self.id);
    }
}

struct Held {
    client: IpAddr,
    serving: Arc<AtomicUsize>,
    push_out: oneshot::Sender<()>,
}

impl Held {
    fn sheddable(&self) -> bool {
        self.serving.load(Ordering::SeqCst) == 0
    }
}

/// Every connection held, oldest first, and how many each client holds.
pub struct Connections {
    max: usize,
    max_per_client: usize,
    next_id: u64,
    open: BTreeMap<u64, Held>,
    per_client: HashMap<IpAddr, usize>,
    pushed_out: u64,
    refused: u64,
    reported: Option<Instant>,
}

impl Connections {
    pub fn new(max: usize, max_per_client: usize) -> Arc<Mutex<Connections>> {
        Arc::new(Mutex::new(Connections {
            max,
            max_per_client,
            next_id: 0,
            open: BTreeMap::new(),
            per_client: HashMap::new(),
            pushed_out: 0,
            refused: 0,
            reported: None,
        }))
    }

    /// A slot for a new connection from `client`, making room first in that client's own
    /// share, then overall; `None` when the connections in the way are all serving.
    pub fn admit(this: &Arc<Mutex<Connections>>, client: IpAddr) -> Option<Slot> {
        let mut connections = this.lock().expect("not poisoned");
        let own = connections.per_client.get(&client).copied().unwrap_or(0);
        if own >= connections.max_per_client && !connections.shed(|held| held.client == client) {
            return None;
        }
        if connections.open.len() >= connections.max && !connections.shed(|_| true) {
            return None;
        }
        let id = connections.next_id;
        connections.next_id += 1;
        let serving = Arc::new(AtomicUsize::new(0));
        let (push_out, pushed_out) = oneshot::channel();
        connections.open.insert(
            id,
            Held {
                client,
                serving: serving.clone(),
                push_out,
            },
        );
        *connections.per_client.entry(client).or_default() += 1;
        Some(Slot {
            serving,
            pushed_out,
            _registration: Registration {
                id,
                connections: this.clone(),
            },
        })
    }

    /// Pushes out the oldest sheddable connection among those `in_the_way`; false when there
    /// is none (the newcomer is refused).
    fn shed(&mut self, in_the_way: impl Fn(&Held) -> bool) -> bool {
        let oldest = self
            .open
            .iter()
            .find(|(_, held)| in_the_way(held) && held.sheddable())
            .map(|(id, _)| *id);
        let shed = match oldest.and_then(|id| self.remove(id)) {
            Some(held) => {
                let _ = held.push_out.send(());
                self.pushed_out += 1;
                true
            }
            None => {
                self.refused += 1;
                false
            }
        };
        self.report();
        shed
    }

    fn remove(&mut self, id: u64) -> Option<Held> {
        let held = self.open.remove(&id)?;
        if let Some(count) = self.per_client.get_mut(&held.client) {
            *count -= 1;
            if *count == 0 {
                self.per_client.remove(&held.client);
            }
        }
        Some(held)
    }

    fn report(&mut self) {
        if self.reported.is_some_and(|at| at.elapsed() < REPORT_EVERY) {
            return;
        }
        tracing::warn!(
            max_connections = self.max,
            max_connections_per_client = self.max_per_client,
            pushed_out = self.pushed_out,
            refused = self.refused,
            "connection cap reached: connections not serving a request pushed out, or new ones refused while every connection in the way serves one"
        );
        self.reported = Some(Instant::now());
        self.pushed_out = 0;
        self.refused = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const TWO: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

    fn held(connections: &Arc<Mutex<Connections>>) -> (usize, Vec<(IpAddr, usize)>) {
        let connections = connections.lock().unwrap();
        let mut per_client: Vec<_> = connections
            .per_client
            .iter()
            .map(|(ip, n)| (*ip, *n))
            .collect();
        per_client.sort();
        (connections.open.len(), per_client)
    }

    #[test]
    fn at_the_cap_the_oldest_connection_not_serving_makes_room() {
        let connections = Connections::new(2, 2);
        let mut first = Connections::admit(&connections, ONE).unwrap();
        let second = Connections::admit(&connections, TWO).unwrap();
        let serving = Serving::start(&second.serving);
        let third = Connections::admit(&connections, TWO).expect("room made");
        assert!(first.pushed_out.try_recv().is_ok(), "the oldest one went");
        assert_eq!(held(&connections), (2, vec![(TWO, 2)]));
        let _serving_too = Serving::start(&third.serving);
        assert!(
            Connections::admit(&connections, ONE).is_none(),
            "everyone serving: refused"
        );
        drop(serving);
        assert!(
            Connections::admit(&connections, ONE).is_some(),
            "second is not serving any more"
        );
        drop((first, second, third));
        assert_eq!(held(&connections), (0, vec![]));
    }

    #[test]
    fn one_client_at_its_share_pushes_out_its_own_connections_not_others() {
        let connections = Connections::new(10, 2);
        let mut other = Connections::admit(&connections, TWO).unwrap();
        let mut first = Connections::admit(&connections, ONE).unwrap();
        let second = Connections::admit(&connections, ONE).unwrap();
        let third = Connections::admit(&connections, ONE).expect("its own oldest makes room");
        assert!(first.pushed_out.try_recv().is_ok(), "its own oldest went");
        assert!(
            other.pushed_out.try_recv().is_err(),
            "the other client kept its own"
        );
        assert_eq!(held(&connections), (3, vec![(ONE, 2), (TWO, 1)]));
        let _serving = Serving::start(&second.serving);
        let _serving_too = Serving::start(&third.serving);
        assert!(
            Connections::admit(&connections, ONE).is_none(),
            "its share is all serving: refused though there is room overall"
        );
        assert!(Connections::admit(&connections, TWO).is_some());
    }
}
