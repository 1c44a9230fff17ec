import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A licensed print-and-mail facility; its scanner apps authenticate with `sk_facility_` keys. */
@Entity('facilities')
export class Facility {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text', default: 'active' }) status: 'active' | 'inactive';
  /** Where pieces are posted from: the fulfillment origin used for postage zones. */
  @Column({ type: 'text', name: 'origin_zip', default: '78701' }) originZip: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}

@Entity('facility_keys')
export class FacilityKey {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'uuid', name: 'facility_id' }) facilityId: string;
  @Column({ type: 'text', name: 'key_hash' }) keyHash: string;
  @Column({ type: 'text', name: 'key_prefix' }) keyPrefix: string;
  @Column({ type: 'text', default: 'active' }) status: 'active' | 'revoked';
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
