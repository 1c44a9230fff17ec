import { findAddresses, parseCityStateZip, zipMatchesState } from '../../domain/inbound-email/address';

describe('US address parser', () => {
  it('parses city, state and ZIP lines in the usual forms', () => {
    expect(parseCityStateZip('Springfield, IL 62701')).toMatchObject({
      city: 'Springfield',
      state: 'IL',
      zip: '62701',
    });
    expect(parseCityStateZip('NEW YORK NY 10001-2345')).toMatchObject({
      city: 'New York',
      state: 'NY',
      zip: '10001-2345',
    });
    expect(parseCityStateZip('Austin, Texas 78701')).toMatchObject({ city: 'Austin', state: 'TX' });
    expect(parseCityStateZip('123 Main St, Springfield IL 62701')).toMatchObject({
      street: '123 Main St',
      city: 'Springfield',
      state: 'IL',
    });
  });

  it('does not take lower-case words for state codes or account numbers for ZIPs', () => {
    expect(parseCityStateZip('Call us in 12345')).toBeNull();
    expect(parseCityStateZip('Account number 12345')).toBeNull();
  });

  it('finds a letterhead sender, a recipient, and a labelled remittance address', () => {
    const text = [
      'Springfield Power & Light',
      'PO Box 4410',
      'Springfield, IL 62705',
      '',
      'Jordan Example',
      '742 Evergreen Terrace',
      'Apt 2',
      'Springfield, IL 62704',
      '',
      'Remit payment to:',
      'SPL Payment Center',
      '1200 Commerce Drive Suite 300',
      'Peoria, IL 61602',
    ].join('\n');
    const [sender, recipient, remit] = findAddresses(text);
    expect(sender).toMatchObject({
      name: 'Springfield Power & Light',
      line1: 'PO Box 4410',
      city: 'Springfield',
      state: 'IL',
      postal_code: '62705',
      role: null,
      verification_status: 'verified_format',
    });
    expect(recipient).toMatchObject({
      name: 'Jordan Example',
      line1: '742 Evergreen Terrace',
      line2: 'Apt 2',
      postal_code: '62704',
    });
    expect(remit).toMatchObject({
      name: 'SPL Payment Center',
      line1: '1200 Commerce Drive',
      line2: 'Suite 300',
      role: 'reply',
    });
    expect(remit.confidence).toBeGreaterThan(sender.confidence - 0.01);
  });

  it('marks an address without a street as unverified and a ZIP from another state as parsed', () => {
    const [noStreet] = findAddresses('Somewhere\nSpringfield, IL 62701');
    expect(noStreet.verification_status).toBe('unverified');
    const [wrongZip] = findAddresses('Acme Corp\n10 Main Street\nSpringfield, IL 90210');
    expect(wrongZip.verification_status).toBe('parsed');
    expect(wrongZip.confidence).toBeLessThan(0.9);
  });

  it('checks ZIP areas against states', () => {
    expect(zipMatchesState('62701', 'IL')).toBe(true);
    expect(zipMatchesState('88510', 'TX')).toBe(true);
    expect(zipMatchesState('10001', 'CA')).toBe(false);
  });
});

describe('US address parser on OCR text', () => {
  it('takes a name set apart by one blank line, but not a sentence', () => {
    const [a] = findAddresses('Shelbyville Legal Services LLP\n\n12 Court Square\nShelbyville, IL 62565');
    expect(a).toMatchObject({ name: 'Shelbyville Legal Services LLP', line1: '12 Court Square' });
    const [b] = findAddresses('Please send the form to the office below\n\n12 Court Square\nShelbyville, IL 62565');
    expect(b.name).toBeNull();
  });
});
