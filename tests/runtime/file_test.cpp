// Files over the host file system: \??\C:\... names under $SOFTNDK_FILE_ROOT, the create
// dispositions and their IO_STATUS_BLOCK.Information, reads and writes at offsets and at the
// file position, end of file, information classes, delete on close.
#include <wdm.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <catch2/catch.hpp>

namespace {

// A fresh SOFTNDK_FILE_ROOT with a "c" drive directory, removed afterwards.
struct FileRoot {
    std::string root;
    FileRoot() {
        char pattern[] = "/tmp/softndk-file-test-XXXXXX";
        REQUIRE(mkdtemp(pattern) != nullptr);
        root = pattern;
        REQUIRE(mkdir((root + "/c").c_str(), 0777) == 0);
        setenv("SOFTNDK_FILE_ROOT", root.c_str(), 1);
    }
    ~FileRoot() {
        unsetenv("SOFTNDK_FILE_ROOT");
        const std::string command = "rm -rf '" + root + "'";
        (void)system(command.c_str());
    }
    bool exists(const std::string &relative) const {
        struct stat info {};
        return stat((root + "/" + relative).c_str(), &info) == 0;
    }
};

struct Name {
    std::wstring text;
    UNICODE_STRING string{};
    explicit Name(std::wstring value) : text(std::move(value)) {
        string.Buffer = text.data();
        string.Length = static_cast<USHORT>(text.size() * sizeof(WCHAR));
        string.MaximumLength = string.Length;
    }
};

NTSTATUS create(HANDLE *file, const std::wstring &path, ULONG disposition, IO_STATUS_BLOCK &io,
                ULONG options = FILE_SYNCHRONOUS_IO_NONALERT | FILE_NON_DIRECTORY_FILE,
                ACCESS_MASK access = GENERIC_READ | GENERIC_WRITE, HANDLE root = nullptr) {
    Name name(path);
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, &name.string, OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE,
                               root, nullptr);
    io.Status = STATUS_PENDING;
    io.Information = 0xdead;
    return ZwCreateFile(file, access, &attributes, &io, nullptr, FILE_ATTRIBUTE_NORMAL,
                        FILE_SHARE_READ, disposition, options, nullptr, 0);
}

}  // namespace

TEST_CASE("files: create dispositions and what IoStatusBlock.Information reports") {
    FileRoot root;
    IO_STATUS_BLOCK io;
    HANDLE file = nullptr;
    CHECK(create(&file, L"\\??\\C:\\a.txt", FILE_OPEN, io) == STATUS_OBJECT_NAME_NOT_FOUND);
    REQUIRE(create(&file, L"\\??\\C:\\a.txt", FILE_CREATE, io) == STATUS_SUCCESS);
    CHECK(io.Status == STATUS_SUCCESS);
    CHECK(io.Information == FILE_CREATED);
    CHECK(root.exists("c/a.txt"));
    ZwClose(file);
    CHECK(create(&file, L"\\DosDevices\\C:\\a.txt", FILE_CREATE, io) ==
          STATUS_OBJECT_NAME_COLLISION);
    REQUIRE(create(&file, L"\\GLOBAL??\\c:\\a.txt", FILE_OPEN_IF, io) == STATUS_SUCCESS);
    CHECK(io.Information == FILE_OPENED);
    ZwClose(file);
    REQUIRE(create(&file, L"\\??\\C:\\a.txt", FILE_OVERWRITE, io) == STATUS_SUCCESS);
    CHECK(io.Information == FILE_OVERWRITTEN);
    ZwClose(file);
    CHECK(create(&file, L"\\??\\C:\\b.txt", FILE_OVERWRITE, io) == STATUS_OBJECT_NAME_NOT_FOUND);
    REQUIRE(create(&file, L"\\??\\C:\\b.txt", FILE_OVERWRITE_IF, io) == STATUS_SUCCESS);
    CHECK(io.Information == FILE_CREATED);
    ZwClose(file);
    REQUIRE(create(&file, L"\\??\\C:\\b.txt", FILE_SUPERSEDE, io) == STATUS_SUCCESS);
    CHECK(io.Information == FILE_SUPERSEDED);
    ZwClose(file);
    CHECK(create(&file, L"\\??\\C:\\missing\\x.txt", FILE_CREATE, io) ==
          STATUS_OBJECT_PATH_NOT_FOUND);
    CHECK(create(&file, L"\\??\\C:\\..\\escape.txt", FILE_CREATE, io) ==
          STATUS_OBJECT_NAME_INVALID);
    CHECK(create(&file, L"\\Device\\HarddiskVolume1\\x", FILE_CREATE, io) ==
          STATUS_OBJECT_PATH_NOT_FOUND);
    CHECK(create(&file, L"\\??\\C:\\a.txt", 9, io) == STATUS_INVALID_PARAMETER);
}

TEST_CASE("files: directories - create, open, relative names, directory/file mismatches") {
    FileRoot root;
    IO_STATUS_BLOCK io;
    HANDLE directory = nullptr, file = nullptr;
    REQUIRE(create(&directory, L"\\??\\C:\\logs", FILE_CREATE, io, FILE_DIRECTORY_FILE,
                   FILE_LIST_DIRECTORY) == STATUS_SUCCESS);
    CHECK(root.exists("c/logs"));
    REQUIRE(create(&file, L"today.log", FILE_CREATE, io, FILE_NON_DIRECTORY_FILE, GENERIC_WRITE,
                   directory) == STATUS_SUCCESS);
    CHECK(root.exists("c/logs/today.log"));
    ZwClose(file);
    CHECK(create(&file, L"\\??\\C:\\logs", FILE_OPEN, io) == STATUS_FILE_IS_A_DIRECTORY);
    CHECK(create(&file, L"\\??\\C:\\logs\\today.log", FILE_OPEN, io, FILE_DIRECTORY_FILE) ==
          STATUS_NOT_A_DIRECTORY);
    // ZwOpenFile is FILE_OPEN.
    Name name(L"\\??\\C:\\logs\\today.log");
    OBJECT_ATTRIBUTES attributes;
    InitializeObjectAttributes(&attributes, &name.string, OBJ_KERNEL_HANDLE, nullptr, nullptr);
    REQUIRE(ZwOpenFile(&file, FILE_GENERIC_READ, &attributes, &io, FILE_SHARE_READ,
                       FILE_SYNCHRONOUS_IO_NONALERT) == STATUS_SUCCESS);
    CHECK(io.Information == FILE_OPENED);
    ZwClose(file);
    Name missing(L"\\??\\C:\\logs\\none.log");
    InitializeObjectAttributes(&attributes, &missing.string, OBJ_KERNEL_HANDLE, nullptr, nullptr);
    CHECK(ZwOpenFile(&file, FILE_GENERIC_READ, &attributes, &io, 0, 0) ==
          STATUS_OBJECT_NAME_NOT_FOUND);
    ZwClose(directory);
}

TEST_CASE("files: reads and writes at offsets, at the position, appending, end of file") {
    FileRoot root;
    IO_STATUS_BLOCK io;
    HANDLE file = nullptr;
    REQUIRE(create(&file, L"\\??\\C:\\data.bin", FILE_CREATE, io) == STATUS_SUCCESS);
    char hello[] = "hello";
    REQUIRE(ZwWriteFile(file, nullptr, nullptr, nullptr, &io, hello, 5, nullptr, nullptr) ==
            STATUS_SUCCESS);
    CHECK(io.Information == 5);
    char world[] = " world";
    REQUIRE(ZwWriteFile(file, nullptr, nullptr, nullptr, &io, world, 6, nullptr, nullptr) ==
            STATUS_SUCCESS);  // at the position: after "hello"
    LARGE_INTEGER end;
    end.HighPart = -1;
    end.LowPart = FILE_WRITE_TO_END_OF_FILE;
    char bang[] = "!";
    REQUIRE(ZwWriteFile(file, nullptr, nullptr, nullptr, &io, bang, 1, &end, nullptr) ==
            STATUS_SUCCESS);

    char buffer[32] = {};
    LARGE_INTEGER zero{};
    REQUIRE(ZwReadFile(file, nullptr, nullptr, nullptr, &io, buffer, sizeof buffer, &zero,
                       nullptr) == STATUS_SUCCESS);
    CHECK(io.Information == 12);
    CHECK(std::string(buffer, 12) == "hello world!");
    // The position is now at the end: the next read is end of file.
    CHECK(ZwReadFile(file, nullptr, nullptr, nullptr, &io, buffer, sizeof buffer, nullptr,
                     nullptr) == STATUS_END_OF_FILE);
    CHECK(io.Status == STATUS_END_OF_FILE);
    CHECK(io.Information == 0);
    LARGE_INTEGER six;
    six.QuadPart = 6;
    std::memset(buffer, 0, sizeof buffer);
    REQUIRE(ZwReadFile(file, nullptr, nullptr, nullptr, &io, buffer, 5, &six, nullptr) ==
            STATUS_SUCCESS);
    CHECK(std::string(buffer) == "world");
    LARGE_INTEGER far;
    far.QuadPart = 100;
    CHECK(ZwReadFile(file, nullptr, nullptr, nullptr, &io, buffer, 5, &far, nullptr) ==
          STATUS_END_OF_FILE);
    CHECK(ZwReadFile(reinterpret_cast<HANDLE>(0x10), nullptr, nullptr, nullptr, &io, buffer, 5,
                     nullptr, nullptr) == STATUS_INVALID_HANDLE);
    CHECK(ZwReadFile(file, file, nullptr, nullptr, &io, buffer, 5, nullptr, nullptr) ==
          STATUS_OBJECT_TYPE_MISMATCH);  // a file handle is not an event handle
    ZwClose(file);

    // A file opened for reading only cannot be written.
    REQUIRE(create(&file, L"\\??\\C:\\data.bin", FILE_OPEN, io, FILE_NON_DIRECTORY_FILE,
                   GENERIC_READ) == STATUS_SUCCESS);
    CHECK(ZwWriteFile(file, nullptr, nullptr, nullptr, &io, hello, 5, &zero, nullptr) ==
          STATUS_ACCESS_DENIED);
    ZwClose(file);
}

TEST_CASE("files: information classes - basic, standard, position, end of file, disposition") {
    FileRoot root;
    IO_STATUS_BLOCK io;
    HANDLE file = nullptr;
    REQUIRE(create(&file, L"\\??\\C:\\info.bin", FILE_CREATE, io) == STATUS_SUCCESS);
    char data[10] = "123456789";
    REQUIRE(ZwWriteFile(file, nullptr, nullptr, nullptr, &io, data, 9, nullptr, nullptr) ==
            STATUS_SUCCESS);

    FILE_STANDARD_INFORMATION standard{};
    REQUIRE(ZwQueryInformationFile(file, &io, &standard, sizeof standard,
                                   FileStandardInformation) == STATUS_SUCCESS);
    CHECK(io.Information == sizeof standard);
    CHECK(standard.EndOfFile.QuadPart == 9);
    CHECK(standard.Directory == FALSE);
    CHECK(standard.DeletePending == FALSE);
    FILE_BASIC_INFORMATION basic{};
    REQUIRE(ZwQueryInformationFile(file, &io, &basic, sizeof basic, FileBasicInformation) ==
            STATUS_SUCCESS);
    LARGE_INTEGER now;
    KeQuerySystemTime(&now);
    // Written just now (the file system's clock and the system time may differ by a tick).
    CHECK(basic.LastWriteTime.QuadPart < now.QuadPart + 10000000LL);
    CHECK(basic.LastWriteTime.QuadPart > now.QuadPart - 600LL * 10000000LL);
    FILE_POSITION_INFORMATION position{};
    REQUIRE(ZwQueryInformationFile(file, &io, &position, sizeof position,
                                   FilePositionInformation) == STATUS_SUCCESS);
    CHECK(position.CurrentByteOffset.QuadPart == 9);
    CHECK(ZwQueryInformationFile(file, &io, &position, sizeof position - 1,
                                 FilePositionInformation) == STATUS_INFO_LENGTH_MISMATCH);
    CHECK(ZwQueryInformationFile(file, &io, &position, sizeof position, FileNameInformation) ==
          STATUS_INVALID_INFO_CLASS);

    position.CurrentByteOffset.QuadPart = 2;
    REQUIRE(ZwSetInformationFile(file, &io, &position, sizeof position, FilePositionInformation) ==
            STATUS_SUCCESS);
    char three[4] = {};
    REQUIRE(ZwReadFile(file, nullptr, nullptr, nullptr, &io, three, 3, nullptr, nullptr) ==
            STATUS_SUCCESS);
    CHECK(std::string(three) == "345");

    FILE_END_OF_FILE_INFORMATION eof{};
    eof.EndOfFile.QuadPart = 4;
    REQUIRE(ZwSetInformationFile(file, &io, &eof, sizeof eof, FileEndOfFileInformation) ==
            STATUS_SUCCESS);
    REQUIRE(ZwQueryInformationFile(file, &io, &standard, sizeof standard,
                                   FileStandardInformation) == STATUS_SUCCESS);
    CHECK(standard.EndOfFile.QuadPart == 4);

    FILE_DISPOSITION_INFORMATION disposition{TRUE};
    REQUIRE(ZwSetInformationFile(file, &io, &disposition, sizeof disposition,
                                 FileDispositionInformation) == STATUS_SUCCESS);
    CHECK(ZwSetInformationFile(file, &io, &disposition, sizeof disposition,
                               FileRenameInformation) == STATUS_INVALID_INFO_CLASS);
    CHECK(root.exists("c/info.bin"));
    ZwClose(file);
    CHECK_FALSE(root.exists("c/info.bin"));

    REQUIRE(create(&file, L"\\??\\C:\\temp.bin", FILE_CREATE, io,
                   FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE) == STATUS_SUCCESS);
    CHECK(root.exists("c/temp.bin"));
    ZwClose(file);
    CHECK_FALSE(root.exists("c/temp.bin"));
}
