//! `fleetglass sessions`: the single sign-on sessions that are live, and revoking them (a
//! person leaving, a stolen laptop). Reads Postgres directly, as `migrate` does: whoever can
//! run it holds the database's credentials. Every revocation is in the audit trail.

use super::output::say;
use crate::store::audit::{self, NewAuditEvent};
use crate::store::web_sessions;
use crate::{app, config};
use anyhow::bail;
use chrono::Utc;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SessionsArgs {
    /// Config file (YAML); DATABASE_URL in the environment overrides its database_url.
    #[arg(long, short, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: SessionsCommand,
}

#[derive(Subcommand, Debug)]
enum SessionsCommand {
    /// The live sessions, newest first: who, since when, until when, from where.
    List,
    /// End every live session of a person (their next request signs in again).
    Revoke {
        /// The name the audit trail shows for them.
        user: String,
    },
}

pub async fn run(args: SessionsArgs) -> anyhow::Result<()> {
    let config = config::load(args.config.as_deref())?;
    let store = app::open_store(&config).await?;
    let mut conn = store.pool().acquire().await?;
    let now = Utc::now();
    match args.command {
        SessionsCommand::List => {
            let live = web_sessions::live(&mut conn, now).await?;
            if live.is_empty() {
                say!("no live sessions");
            }
            for session in live {
                say!(
                    "{}\tsince {}\tuntil {}\tfrom {}",
                    session.username,
                    session.created_at.format("%Y-%m-%d %H:%M:%SZ"),
                    session.expires_at.format("%Y-%m-%d %H:%M:%SZ"),
                    session.source,
                );
            }
        }
        SessionsCommand::Revoke { user } => {
            let mut tx = store.pool().begin().await?;
            let ended = web_sessions::revoke_user(&mut tx, &user, now).await?;
            if ended == 0 {
                bail!("{user} has no live session");
            }
            let detail = format!("{ended} session(s) revoked");
            let event = NewAuditEvent {
                actor: &operator(),
                action: "sessions-revoked",
                subject: &user,
                detail: &detail,
                source: "command line",
            };
            audit::record(&mut tx, &event, now).await?;
            tx.commit().await?;
            say!("{user}: {detail}");
        }
    }
    Ok(())
}

/// Who ran the command, as the machine names them.
fn operator() -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    format!("{user} (fleetglass sessions)")
}
