// EVE's quota for the log files a device keeps on disk (newlogd, eve-wire-facts §8.3): config item
// newlog.gzipfiles.ondisk.maxmegabytes, default 2048, in megabytes of 1,000,000 bytes. The file
// count is capped too, at quota / 50,000 (the gzip file size), since many small files could
// otherwise outgrow the disk's inodes. Over either limit EVE deletes files until it is under both
// (strictly): sent files it keeps, then failed ones, then app files waiting for upload, then
// device files waiting for upload, each group oldest first. evesim keeps neither sent nor failed
// files, so its victims are the oldest waiting app files, then the oldest waiting device files.

/** EVE's default of newlog.gzipfiles.ondisk.maxmegabytes. */
export const EVE_LOG_QUOTA_MB = 2048;
/** EVE's smallest accepted value of it. */
export const EVE_LOG_QUOTA_MIN_MB = 10;
/** EVE's gzip file size the file-count limit is derived from. */
export const EVE_GZIP_FILE_BYTES = 50_000;

export interface LogQuota {
  bytes: number;
  files: number;
}

/** The quota for `megabytes` (EVE's megabytes: 1,000,000 bytes). */
export function logQuota(megabytes: number = EVE_LOG_QUOTA_MB): LogQuota {
  const bytes = megabytes * 1_000_000;
  return { bytes, files: Math.floor(bytes / EVE_GZIP_FILE_BYTES) };
}

/** A quota in bytes (DeviceBehaviour.logQuotaBytes) with EVE's file-count limit derived from it. */
export function logQuotaOfBytes(bytes: number): LogQuota {
  return { bytes, files: Math.max(1, Math.floor(bytes / EVE_GZIP_FILE_BYTES)) };
}

/** EVE starts deleting when the kept files exceed either limit. */
export function overQuota(q: LogQuota, bytes: number, files: number): boolean {
  return bytes > q.bytes || files > q.files;
}

/** ... and stops once it is under both. */
export function underQuota(q: LogQuota, bytes: number, files: number): boolean {
  return bytes < q.bytes && files < q.files;
}
