import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A waitlist reservation (`wl_` + 16 hex); signup with lead_id stitches it to a member. */
@Entity('waitlist_leads')
export class WaitlistLead {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'text' }) email: string;
  @Column({ type: 'text', nullable: true }) needs: string | null;
  @Column({ type: 'text', name: 'preferred_location', nullable: true }) preferredLocation: string | null;
  @Column({ type: 'text', name: 'callback_url', nullable: true }) callbackUrl: string | null;
  @Column({ type: 'text', name: 'agent_id', nullable: true }) agentId: string | null;
  @Column({ type: 'text', name: 'operator_contact', nullable: true }) operatorContact: string | null;
  @Column({ type: 'text', default: 'api' }) source: 'web' | 'api' | 'agent';
  @Column({ type: 'text', default: 'waitlisted' }) stage: 'waitlisted' | 'account_created' | 'email_verified' | 'active' | 'unknown';
  @Column({ type: 'uuid', name: 'member_id', nullable: true }) memberId: string | null;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
