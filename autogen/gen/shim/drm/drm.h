/* Stand-in for the DRM uapi header that Debian does not ship: linux/kfd_ioctl.h only needs __u32/__u64. */
#include <linux/types.h>
