// Label/value pairing on laid-out text: each rule on the arrangement it is for.
import {
  billFields,
  blocksText,
  layoutRows,
  letterheadName,
  parseAmountCents,
  parseDate,
  parseDocumentNumber,
} from '../../domain/inbound-email/layout';

describe('values', () => {
  it('reads amounts with $ and thousands separators, and refuses negative or blank ones', () => {
    expect(parseAmountCents('$1,234.56')).toBe(123456);
    expect(parseAmountCents('$ 42')).toBe(4200);
    expect(parseAmountCents('Total 1,259.05 USD')).toBe(125905);
    expect(parseAmountCents('-$61.20')).toBeNull();
    expect(parseAmountCents('$__________')).toBeNull();
    expect(parseAmountCents('on March 3, 2026')).toBeNull();
  });

  it('reads the common US date forms', () => {
    expect(parseDate('March 14, 2026')).toBe('2026-03-14');
    expect(parseDate('Mar 20, 2026')).toBe('2026-03-20');
    expect(parseDate('03/07/2026. Questions?')).toBe('2026-03-07');
    expect(parseDate('3/3/26')).toBe('2026-03-03');
    expect(parseDate('2026-04-01')).toBe('2026-04-01');
    expect(parseDate('15 April 2026')).toBe('2026-04-15');
    expect(parseDate('Net 30')).toBeNull();
  });

  it('reads document numbers but not dates, amounts or words', () => {
    expect(parseDocumentNumber('NW-2026-0142')).toBe('NW-2026-0142');
    expect(parseDocumentNumber('10234')).toBe('10234');
    expect(parseDocumentNumber('L1025-4471-09,')).toBe('L1025-4471-09');
    expect(parseDocumentNumber('Due Date')).toBeNull();
    expect(parseDocumentNumber('03/03/2026')).toBeNull();
    expect(parseDocumentNumber('$185.00')).toBeNull();
  });
});

describe('pairing rules', () => {
  it('splits lines into cells at wide gaps and leader dots', () => {
    expect(layoutRows('Total Due ..........   $842.10')[0].cells.map((c) => c.text)).toEqual(['Total Due', '$842.10']);
    expect(layoutRows('Invoice Number: NW-1   Due Date')[0].cells.map((c) => c.text)).toEqual([
      'Invoice Number: NW-1',
      'Due Date',
    ]);
  });

  it('same cell: label and value together', () => {
    const f = billFields(
      'Invoice Number: INV-7781\nAmount due: $123.45\nPlease pay by 03/07/2026. Questions? Call us.',
    );
    expect(f.invoiceNumber).toMatchObject({ value: 'INV-7781', rule: 'same_cell' });
    expect(f.amountDue).toMatchObject({ value: 12345, rule: 'same_cell' });
    expect(f.dueDate).toMatchObject({ value: '2026-03-07', rule: 'same_cell' });
  });

  it('same line, further right: a far column, leader dots, and the amount after "due on <date>"', () => {
    const f = billFields(
      [
        'Invoice No.                                        58812-A',
        'Total amount due on March 3, 2026 ...............  $1,234.56',
      ].join('\n'),
    );
    expect(f.invoiceNumber).toMatchObject({ value: '58812-A', rule: 'same_line' });
    expect(f.amountDue).toMatchObject({ value: 123456, rule: 'same_line', label: 'Total amount due' });
    expect(f.dueDate).toMatchObject({ value: '2026-03-03', rule: 'same_cell' });
  });

  it('next line / column below: labels above values, a header grid, a remittance stub', () => {
    const above = billFields(
      [
        'Northwind Graphic Design LLC                  Invoice Number',
        'billing@example.test                          NW-2026-0142',
        '',
        'Bill To                                       Due Date',
        'Jordan Example',
        '                                              March 14, 2026',
      ].join('\n'),
    );
    expect(above.invoiceNumber).toMatchObject({ value: 'NW-2026-0142', rule: 'column_below' });
    expect(above.dueDate).toMatchObject({ value: '2026-03-14', rule: 'column_below' });
    const grid = billFields(
      [
        'Account Number       Invoice Number       Due Date         Amount Due',
        '7730-55              EL-40917             03/10/2026       $185.00',
      ].join('\n'),
    );
    expect(grid).toMatchObject({
      invoiceNumber: { value: 'EL-40917' },
      dueDate: { value: '2026-03-10' },
      amountDue: { value: 18500, rule: 'column_below' },
    });
  });

  it('table totals: the strongest label wins over a bare Total, and paid or current-charge totals are not due', () => {
    const f = billFields(
      [
        '                         Subtotal             $1,140.00',
        '                         Total                $1,259.05',
        '                         Amount Paid            $100.00',
        '                         Balance Due          $1,159.05',
      ].join('\n'),
    );
    expect(f.amountDue).toMatchObject({ value: 115905, label: 'Balance Due' });
    expect(billFields('Total Current Charges    $87.45\nTotal    $90.00').amountDue).toMatchObject({ value: 9000 });
  });
});

describe('letterhead and reading order', () => {
  it('names the sender from the top-left (or centred) name, skipping document titles and the right-hand column', () => {
    expect(
      letterheadName(
        '                                      Jordan Example\nEVERGREEN LAWN CARE                   742 Evergreen Terrace',
      ),
    ).toBe('EVERGREEN LAWN CARE');
    expect(letterheadName('INVOICE\nNorthwind Graphic Design LLC\n1450 Larkin Street')).toBe(
      'Northwind Graphic Design LLC',
    );
    expect(
      letterheadName(
        '          Cascade Plumbing & Heating Inc.\n       2200 Industrial Way - Tacoma, WA 98421                    ',
      ),
    ).toBe('Cascade Plumbing & Heating Inc.');
    expect(letterheadName('February 3, 2026\nDear Jordan,')).toBeNull();
  });

  it('reads side-by-side blocks one after the other', () => {
    const text = [
      'Metro Water & Sewer Authority        Account Number   100-2234-889',
      'PO Box 9120                          Bill Number      7781203',
      'Harrisburg, PA 17105',
    ].join('\n');
    expect(blocksText(text)).toBe(
      'Metro Water & Sewer Authority\nPO Box 9120\nHarrisburg, PA 17105\n\nAccount Number\nBill Number\n\n100-2234-889\n7781203',
    );
  });
});
