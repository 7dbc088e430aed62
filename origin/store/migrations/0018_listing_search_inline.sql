-- A listing's text-search vector is kept in its row (compressed there if
-- need be) rather than out of line in TOAST. A realistic listing's vector
-- is about 1.3 kB and, beside its document and description, was moved out
-- of line: a search read it back from TOAST (an index lookup and a chunk or
-- more) for every listing it walked past and every match it ranked — on a
-- 100,000-listing site, 1,831 block reads to find the window of a broad
-- search, 153 with the vector in the row. Rows take the new storage when
-- they are next written; existing rows keep theirs until then (a listing's
-- vector is written again whenever its text changes).
ALTER TABLE listings ALTER COLUMN search SET STORAGE MAIN;
