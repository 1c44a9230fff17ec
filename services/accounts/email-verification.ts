// Verifying a new account's email address. Signup records a one-time link (expiring after
// EMAIL_LINK_HOURS) and the email that carries it, in its own transaction; the owner's
// notifier sends it. Opening the link shows a button (a mail scanner that fetches the link
// does not spend it); its POST marks the address verified, and a waitlist lead stitched to
// the account moves to the email_verified stage, which its status_url shows.
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import { emailLinkKey } from '../../domain/notifications/links';
import { recordNotice } from '../notifications/notices';
import { useEmailLink } from '../notifications/settings';
import { sqlRows } from '../shared/sql';
import { markMemberEmailVerified } from './member-rows';
import { markLeadEmailVerified } from './waitlist-rows';
import { insertVerifyEmailLink } from '../notifications/email-link-rows';

/** Records the member's verification link and its email, inside the signup's transaction. */
export async function issueEmailVerification(
  deps: Deps,
  tx: EntityManager,
  member: { id: string; full_name: string },
): Promise<void> {
  const expires = new Date(Date.now() + deps.config.notifications.emailLinkHours * 3600_000);
  const link = await insertVerifyEmailLink(tx, member.id, expires);
  await recordNotice(
    tx,
    {
      memberId: member.id,
      kind: 'verify_email',
      eventKey: `verify-email:${link.id}`,
      payload: {
        link_id: link.id,
        full_name: member.full_name,
        expires_at: expires
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC'),
      },
    },
    'owner',
  );
}

/** Uses a verification link once: the address is verified and a stitched lead moves on. */
export async function verifyEmail(deps: Deps, token: unknown): Promise<{ email: string; leadId: string | null }> {
  return deps.db.transaction(async (tx) => {
    const link = await useEmailLink(tx, emailLinkKey(deps.config.appEncryptionKey), 'verify_email', token);
    if (!link) {
      throw errors.badRequest(
        'EMAIL_LINK_INVALID',
        'This verification link is not valid: it was used already, it expired, or it was mistyped.',
        {
          suggestedAction:
            'If the address is verified already, nothing more is needed; otherwise contact the owner address.',
        },
      );
    }
    const [member] = await markMemberEmailVerified(tx, link.member_id);
    const [lead] = await markLeadEmailVerified(tx, link.member_id);
    return { email: member.email as string, leadId: (lead?.id as string | undefined) ?? null };
  });
}
