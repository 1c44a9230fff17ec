// The pagination block of every list answer: the total, the page that was asked for, and
// whether more follow. Physical-inbound lists also carry next_offset.

export interface PageBlock {
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export function pagination(total: number, limit: number, offset: number): PageBlock {
  return { total, limit, offset, has_more: offset + limit < total };
}

export function paginationWithNext(
  total: number,
  limit: number,
  offset: number,
): PageBlock & { next_offset: number | null } {
  const page = pagination(total, limit, offset);
  return { ...page, next_offset: page.has_more ? offset + limit : null };
}
