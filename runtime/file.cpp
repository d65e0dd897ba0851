// Files over the host file system (contract in softndk_wdm_system.h): ZwCreateFile, ZwOpenFile,
// ZwReadFile, ZwWriteFile, ZwQueryInformationFile, ZwSetInformationFile. A file object is a
// KernelObject owning a POSIX descriptor; it closes (and, if a delete is pending, unlinks) when
// its last handle or reference goes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <cwctype>
#include <mutex>
#include <new>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "wdk_internal.hpp"

// A file opened on the host. Its pointer is what ObReferenceObjectByHandle returns for a
// file handle (type *IoFileObjectType): SoftNDK's own object, not a Windows FILE_OBJECT (so
// this file defines no struct HostFile, which the I/O part of wdm.h owns).
struct HostFile : softndk::wdk::KernelObject {
    HostFile() : KernelObject(&softndk::wdk::g_file_type) {}
    ~HostFile() override {
        if (descriptor >= 0) close(descriptor);
        if (delete_pending) {
            if (directory ? rmdir(path.c_str()) : unlink(path.c_str())) {
                softndk::wdk::logger().warn("file close: could not delete {}: {}", path,
                                            std::strerror(errno));
            }
        }
    }
    int descriptor = -1;
    std::string path;
    bool directory = false;
    bool delete_pending = false;
    std::mutex lock;
    LONGLONG position = 0;
};

namespace softndk::wdk {
namespace {

NTSTATUS status_from_errno(int error) {
    switch (error) {
        case ENOENT:
            return STATUS_OBJECT_NAME_NOT_FOUND;
        case EEXIST:
            return STATUS_OBJECT_NAME_COLLISION;
        case EACCES:
        case EPERM:
            return STATUS_ACCESS_DENIED;
        case EISDIR:
            return STATUS_FILE_IS_A_DIRECTORY;
        case ENOTDIR:
            return STATUS_OBJECT_PATH_NOT_FOUND;
        case ENOSPC:
            return STATUS_INSUFFICIENT_RESOURCES;
        case ENAMETOOLONG:
            return STATUS_OBJECT_NAME_INVALID;
        case ENOTEMPTY:
            return STATUS_CANNOT_DELETE;
        default:
            return STATUS_UNSUCCESSFUL;
    }
}

// Appends the components of a backslash-separated Windows path to a host path, in UTF-8.
// ".." -> STATUS_OBJECT_NAME_INVALID; empty and "." components are skipped.
NTSTATUS append_components(std::wstring_view rest, std::string &path) {
    std::string component;
    auto flush = [&]() {
        if (component == "..") return false;
        if (!component.empty() && component != ".") path += "/" + component;
        component.clear();
        return true;
    };
    for (const wchar_t c : rest) {
        if (c == L'\\' || c == L'/') {
            if (!flush()) return STATUS_OBJECT_NAME_INVALID;
            continue;
        }
        if (c == 0) return STATUS_OBJECT_NAME_INVALID;
        char buffer[MB_LEN_MAX];
        std::mbstate_t state{};
        const size_t n = c < 0x80 ? static_cast<size_t>(-1) : std::wcrtomb(buffer, c, &state);
        if (n == static_cast<size_t>(-1)) {
            component.push_back(c < 0x80 ? static_cast<char>(c) : '?');
        } else {
            component.append(buffer, n);
        }
    }
    return flush() ? STATUS_SUCCESS : STATUS_OBJECT_NAME_INVALID;
}

// The host path of a Windows file name (see the header), or a failure status.
NTSTATUS host_path(const std::wstring &name, std::string &out) {
    std::wstring rest;
    const std::wstring normalized = normalize_object_name(name);
    const std::wstring upper = upcase_name(normalized);
    if (upper.starts_with(L"\\??\\")) {
        rest = normalized.substr(4);
    } else if (upper == L"\\SYSTEMROOT" || upper.starts_with(L"\\SYSTEMROOT\\")) {
        rest = L"C:\\Windows" + normalized.substr(11);
    } else {
        return STATUS_OBJECT_PATH_NOT_FOUND;
    }
    if (rest.size() < 2 || rest[1] != L':' || !iswalpha(rest[0]))
        return STATUS_OBJECT_PATH_NOT_FOUND;
    const char *root_env = std::getenv("SOFTNDK_FILE_ROOT");
    std::string path = root_env != nullptr && *root_env != '\0' ? root_env : ".";
    path += '/';
    path += static_cast<char>(std::tolower(static_cast<int>(rest[0])));
    const NTSTATUS status = append_components(std::wstring_view(rest).substr(2), path);
    if (!NT_SUCCESS(status)) return status;
    out = path;
    return STATUS_SUCCESS;
}

LARGE_INTEGER to_windows_time(const struct timespec &t) {
    LARGE_INTEGER out;
    out.QuadPart = (static_cast<LONGLONG>(t.tv_sec) + 11644473600LL) * 10000000LL + t.tv_nsec / 100;
    return out;
}

NTSTATUS create_file(PHANDLE handle, ACCESS_MASK access, POBJECT_ATTRIBUTES attributes,
                     PIO_STATUS_BLOCK io_status, ULONG disposition, ULONG options,
                     const char *caller) {
    require_passive(caller);
    if (handle == nullptr || attributes == nullptr || io_status == nullptr)
        return STATUS_INVALID_PARAMETER;
    *handle = nullptr;
    if (disposition > FILE_OVERWRITE_IF ||
        ((options & FILE_DIRECTORY_FILE) != 0 && (options & FILE_NON_DIRECTORY_FILE) != 0))
        return STATUS_INVALID_PARAMETER;
    std::string path;
    if (attributes->RootDirectory != nullptr) {
        HandleRef<HostFile> root(attributes->RootDirectory, &g_file_type);
        if (!NT_SUCCESS(root.status())) return root.status();
        if (!root->directory) return STATUS_INVALID_PARAMETER;
        const std::wstring relative = object_name(attributes);
        if (!relative.empty() && relative.front() == L'\\') return STATUS_OBJECT_PATH_SYNTAX_BAD;
        path = root->path;
        const NTSTATUS status = append_components(relative, path);
        if (!NT_SUCCESS(status)) return status;
    } else {
        const NTSTATUS status = host_path(object_name(attributes), path);
        if (!NT_SUCCESS(status)) return status;
    }

    struct stat info {};
    const bool exists = stat(path.c_str(), &info) == 0;
    const bool is_directory = exists && S_ISDIR(info.st_mode);
    if (!exists) {
        const size_t slash = path.rfind('/');
        struct stat parent {};
        if (slash != std::string::npos &&
            (stat(path.substr(0, slash).c_str(), &parent) != 0 || !S_ISDIR(parent.st_mode)))
            return STATUS_OBJECT_PATH_NOT_FOUND;
    }
    if (exists && (options & FILE_DIRECTORY_FILE) != 0 && !is_directory)
        return STATUS_NOT_A_DIRECTORY;
    if (is_directory && (options & FILE_NON_DIRECTORY_FILE) != 0) return STATUS_FILE_IS_A_DIRECTORY;

    ULONG_PTR information = FILE_OPENED;
    int flags = O_CLOEXEC;
    switch (disposition) {
        case FILE_OPEN:
            if (!exists) return STATUS_OBJECT_NAME_NOT_FOUND;
            break;
        case FILE_CREATE:
            if (exists) return STATUS_OBJECT_NAME_COLLISION;
            information = FILE_CREATED;
            break;
        case FILE_OPEN_IF:
            information = exists ? FILE_OPENED : FILE_CREATED;
            break;
        case FILE_OVERWRITE:
            if (!exists) return STATUS_OBJECT_NAME_NOT_FOUND;
            flags |= O_TRUNC;
            information = FILE_OVERWRITTEN;
            break;
        case FILE_OVERWRITE_IF:
            flags |= O_TRUNC;
            information = exists ? FILE_OVERWRITTEN : FILE_CREATED;
            break;
        case FILE_SUPERSEDE:
            flags |= O_TRUNC;
            information = exists ? FILE_SUPERSEDED : FILE_CREATED;
            break;
    }
    const bool wants_directory = (options & FILE_DIRECTORY_FILE) != 0;
    if (is_directory && (flags & O_TRUNC) != 0) return STATUS_FILE_IS_A_DIRECTORY;
    if (!exists && wants_directory) {
        if (mkdir(path.c_str(), 0777) != 0) return status_from_errno(errno);
    }
    const bool directory = is_directory || wants_directory;
    const bool writes =
        (access & (GENERIC_WRITE | GENERIC_ALL | FILE_WRITE_DATA | FILE_APPEND_DATA)) != 0;
    if (directory) {
        flags |= O_RDONLY | O_DIRECTORY;
    } else {
        flags |= writes ? O_RDWR : O_RDONLY;
        if (!exists) flags |= O_CREAT;
        if ((flags & O_TRUNC) != 0 && !writes) flags = (flags & ~O_RDONLY) | O_RDWR;
    }
    const int descriptor = open(path.c_str(), flags, 0666);
    if (descriptor < 0) return status_from_errno(errno);
    auto *file = new (std::nothrow) HostFile;
    if (file == nullptr) {
        close(descriptor);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    file->descriptor = descriptor;
    file->path = path;
    file->directory = directory;
    file->delete_pending = (options & FILE_DELETE_ON_CLOSE) != 0;
    io_status->Status = STATUS_SUCCESS;
    io_status->Information = information;
    *handle = insert_handle(file);
    return STATUS_SUCCESS;
}

// Where an I/O starts: ByteOffset, or the file position.
LONGLONG start_offset(HostFile &file, PLARGE_INTEGER byte_offset, bool write) {
    if (byte_offset == nullptr) return file.position;
    if (byte_offset->HighPart == -1 && byte_offset->LowPart == FILE_USE_FILE_POINTER_POSITION)
        return file.position;
    if (write && byte_offset->HighPart == -1 && byte_offset->LowPart == FILE_WRITE_TO_END_OF_FILE) {
        struct stat info {};
        fstat(file.descriptor, &info);
        return info.st_size;
    }
    return byte_offset->QuadPart;
}

NTSTATUS finish_io(PIO_STATUS_BLOCK io_status, NTSTATUS status, ULONG_PTR bytes) {
    io_status->Status = status;
    io_status->Information = bytes;
    return status;
}

NTSTATUS transfer(HANDLE handle, HANDLE event, PIO_APC_ROUTINE apc, PIO_STATUS_BLOCK io_status,
                  PVOID buffer, ULONG length, PLARGE_INTEGER byte_offset, bool write,
                  const char *caller) {
    require_passive(caller);
    if (io_status == nullptr || (buffer == nullptr && length != 0) || apc != nullptr)
        return STATUS_INVALID_PARAMETER;
    HandleRef<HostFile> file(handle, &g_file_type);
    if (!NT_SUCCESS(file.status())) return file.status();
    if (file->directory) return STATUS_INVALID_DEVICE_REQUEST;
    if (event != nullptr) {
        // The runtime makes no event handles (KEVENTs have none), so an Event handle can only
        // be a wrong one.
        PVOID object = nullptr;
        const NTSTATUS status = reference_handle(event, nullptr, &object);
        if (!NT_SUCCESS(status)) return status;
        object_dereference(object, caller);
        return STATUS_OBJECT_TYPE_MISMATCH;
    }
    std::lock_guard guard(file->lock);
    const LONGLONG offset = start_offset(*file.get(), byte_offset, write);
    if (offset < 0) return STATUS_INVALID_PARAMETER;
    size_t done = 0;
    while (done < length) {
        const ssize_t n = write ? pwrite(file->descriptor, static_cast<const char *>(buffer) + done,
                                         length - done, offset + static_cast<LONGLONG>(done))
                                : pread(file->descriptor, static_cast<char *>(buffer) + done,
                                        length - done, offset + static_cast<LONGLONG>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return finish_io(
                io_status, errno == EBADF ? STATUS_ACCESS_DENIED : status_from_errno(errno), done);
        }
        if (n == 0) break;  // end of file (reads only)
        done += static_cast<size_t>(n);
    }
    file->position = offset + static_cast<LONGLONG>(done);
    if (!write && done == 0 && length != 0) return finish_io(io_status, STATUS_END_OF_FILE, 0);
    return finish_io(io_status, STATUS_SUCCESS, done);
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

NTSTATUS NTAPI ZwCreateFile(PHANDLE FileHandle, ACCESS_MASK DesiredAccess,
                            POBJECT_ATTRIBUTES ObjectAttributes, PIO_STATUS_BLOCK IoStatusBlock,
                            PLARGE_INTEGER AllocationSize, ULONG FileAttributes, ULONG ShareAccess,
                            ULONG CreateDisposition, ULONG CreateOptions, PVOID EaBuffer,
                            ULONG EaLength) {
    (void)AllocationSize;
    (void)FileAttributes;
    (void)ShareAccess;
    (void)EaBuffer;
    (void)EaLength;
    return wdk::create_file(FileHandle, DesiredAccess, ObjectAttributes, IoStatusBlock,
                            CreateDisposition, CreateOptions, "ZwCreateFile");
}

NTSTATUS NTAPI ZwOpenFile(PHANDLE FileHandle, ACCESS_MASK DesiredAccess,
                          POBJECT_ATTRIBUTES ObjectAttributes, PIO_STATUS_BLOCK IoStatusBlock,
                          ULONG ShareAccess, ULONG OpenOptions) {
    (void)ShareAccess;
    return wdk::create_file(FileHandle, DesiredAccess, ObjectAttributes, IoStatusBlock, FILE_OPEN,
                            OpenOptions, "ZwOpenFile");
}

NTSTATUS NTAPI ZwReadFile(HANDLE FileHandle, HANDLE Event, PIO_APC_ROUTINE ApcRoutine,
                          PVOID ApcContext, PIO_STATUS_BLOCK IoStatusBlock, PVOID Buffer,
                          ULONG Length, PLARGE_INTEGER ByteOffset, PULONG Key) {
    (void)ApcContext;
    (void)Key;
    return wdk::transfer(FileHandle, Event, ApcRoutine, IoStatusBlock, Buffer, Length, ByteOffset,
                         false, "ZwReadFile");
}

NTSTATUS NTAPI ZwWriteFile(HANDLE FileHandle, HANDLE Event, PIO_APC_ROUTINE ApcRoutine,
                           PVOID ApcContext, PIO_STATUS_BLOCK IoStatusBlock, PVOID Buffer,
                           ULONG Length, PLARGE_INTEGER ByteOffset, PULONG Key) {
    (void)ApcContext;
    (void)Key;
    return wdk::transfer(FileHandle, Event, ApcRoutine, IoStatusBlock, Buffer, Length, ByteOffset,
                         true, "ZwWriteFile");
}

NTSTATUS NTAPI ZwQueryInformationFile(HANDLE FileHandle, PIO_STATUS_BLOCK IoStatusBlock,
                                      PVOID FileInformation, ULONG Length,
                                      FILE_INFORMATION_CLASS FileInformationClass) {
    wdk::require_passive("ZwQueryInformationFile");
    if (IoStatusBlock == nullptr || FileInformation == nullptr) return STATUS_INVALID_PARAMETER;
    wdk::HandleRef<HostFile> file(FileHandle, &wdk::g_file_type);
    if (!NT_SUCCESS(file.status())) return file.status();
    std::lock_guard guard(file->lock);
    struct stat info {};
    if (fstat(file->descriptor, &info) != 0) return wdk::status_from_errno(errno);
    ULONG size = 0;
    switch (FileInformationClass) {
        case FileBasicInformation: {
            size = sizeof(FILE_BASIC_INFORMATION);
            if (Length < size) return STATUS_INFO_LENGTH_MISMATCH;
            auto *basic = static_cast<PFILE_BASIC_INFORMATION>(FileInformation);
            basic->CreationTime = wdk::to_windows_time(info.st_ctim);
            basic->LastAccessTime = wdk::to_windows_time(info.st_atim);
            basic->LastWriteTime = wdk::to_windows_time(info.st_mtim);
            basic->ChangeTime = wdk::to_windows_time(info.st_ctim);
            basic->FileAttributes = S_ISDIR(info.st_mode)           ? FILE_ATTRIBUTE_DIRECTORY
                                    : (info.st_mode & S_IWUSR) == 0 ? FILE_ATTRIBUTE_READONLY
                                                                    : FILE_ATTRIBUTE_NORMAL;
            break;
        }
        case FileStandardInformation: {
            size = sizeof(FILE_STANDARD_INFORMATION);
            if (Length < size) return STATUS_INFO_LENGTH_MISMATCH;
            auto *standard = static_cast<PFILE_STANDARD_INFORMATION>(FileInformation);
            standard->AllocationSize.QuadPart = static_cast<LONGLONG>(info.st_blocks) * 512;
            standard->EndOfFile.QuadPart = info.st_size;
            standard->NumberOfLinks = static_cast<ULONG>(info.st_nlink);
            standard->DeletePending = file->delete_pending ? TRUE : FALSE;
            standard->Directory = S_ISDIR(info.st_mode) ? TRUE : FALSE;
            break;
        }
        case FilePositionInformation:
            size = sizeof(FILE_POSITION_INFORMATION);
            if (Length < size) return STATUS_INFO_LENGTH_MISMATCH;
            static_cast<PFILE_POSITION_INFORMATION>(FileInformation)->CurrentByteOffset.QuadPart =
                file->position;
            break;
        default:
            return STATUS_INVALID_INFO_CLASS;
    }
    IoStatusBlock->Status = STATUS_SUCCESS;
    IoStatusBlock->Information = size;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI ZwSetInformationFile(HANDLE FileHandle, PIO_STATUS_BLOCK IoStatusBlock,
                                    PVOID FileInformation, ULONG Length,
                                    FILE_INFORMATION_CLASS FileInformationClass) {
    wdk::require_passive("ZwSetInformationFile");
    if (IoStatusBlock == nullptr || FileInformation == nullptr) return STATUS_INVALID_PARAMETER;
    wdk::HandleRef<HostFile> file(FileHandle, &wdk::g_file_type);
    if (!NT_SUCCESS(file.status())) return file.status();
    std::lock_guard guard(file->lock);
    switch (FileInformationClass) {
        case FilePositionInformation: {
            if (Length < sizeof(FILE_POSITION_INFORMATION)) return STATUS_INFO_LENGTH_MISMATCH;
            const LONGLONG position = static_cast<PFILE_POSITION_INFORMATION>(FileInformation)
                                          ->CurrentByteOffset.QuadPart;
            if (position < 0) return STATUS_INVALID_PARAMETER;
            file->position = position;
            break;
        }
        case FileEndOfFileInformation: {
            if (Length < sizeof(FILE_END_OF_FILE_INFORMATION)) return STATUS_INFO_LENGTH_MISMATCH;
            if (file->directory) return STATUS_INVALID_PARAMETER;
            const LONGLONG end =
                static_cast<PFILE_END_OF_FILE_INFORMATION>(FileInformation)->EndOfFile.QuadPart;
            if (end < 0) return STATUS_INVALID_PARAMETER;
            if (ftruncate(file->descriptor, end) != 0)
                return errno == EBADF || errno == EINVAL ? STATUS_ACCESS_DENIED
                                                         : wdk::status_from_errno(errno);
            break;
        }
        case FileDispositionInformation:
            if (Length < sizeof(FILE_DISPOSITION_INFORMATION)) return STATUS_INFO_LENGTH_MISMATCH;
            file->delete_pending =
                static_cast<PFILE_DISPOSITION_INFORMATION>(FileInformation)->DeleteFile != FALSE;
            break;
        default:
            return STATUS_INVALID_INFO_CLASS;
    }
    IoStatusBlock->Status = STATUS_SUCCESS;
    IoStatusBlock->Information = 0;
    return STATUS_SUCCESS;
}

}  // extern "C"
